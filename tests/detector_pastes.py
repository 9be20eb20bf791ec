"""A held-out style set of realistic pastes for the sensitive-data detector: what users paste into a chat
(code, shell history, config, prose) in several languages, each with a secret or private record
(``POSITIVES``) or with a harmless lookalike (``CONTROLS``).

Every secret is synthetic and assembled from pieces at import time, so the repository holds no string
that a secret scanner would flag. ``benchmarks/detector.py`` counts how many positives a checkout finds.
"""

from __future__ import annotations

import base64

PW = "Tr0ub4dor" + "&3x"
PW2 = "S3cr3t" + "Pa55w0rd"
AZ_KEY = ("FAKEazureKey0" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3/+" * 3)[:86] + "=="
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/" + "K1SZFPTOtr/KBHBeksoGMGw=="
DOCKER_PAT = "dckr" + "_pat_" + "FAKE0fake1FAKE2fake3FAKE4xy"
PEM_KEY = ("-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA" + "fAkE" * 16 + "\n" + "FaKe0123" * 8
           + "\n-----END " + "RSA PRIVATE KEY-----\n")
KEY_DATA = base64.b64encode(PEM_KEY.encode()).decode()
CERT_DATA = base64.b64encode(("-----BEGIN " + "CERTIFICATE-----\nMIIC" + "cErT" * 30 + "\n-----END CERTIFICATE-----\n")
                             .encode()).decode()
HEX_KEY = PEM_KEY.encode().hex()
B64_DOTENV = base64.b64encode(f"DB_HOST=db.internal\nDB_PASSWORD={PW2}\n".encode()).decode()


def _t(prefix: str, body: str) -> str:
    return prefix + body


# (label, language, text, a value that must not appear in any finding)
POSITIVES: list[tuple[str, str, str, str]] = [
    # -- the kinds issue 25 found leaking ------------------------------------------------------------
    ("azure connection string C#", "code",
     'var conn = "DefaultEndpointsProtocol=https;AccountName=acmeprodlogs;AccountKey=' + AZ_KEY
     + ';EndpointSuffix=core.windows.net";\nvar client = new BlobServiceClient(conn);', AZ_KEY),
    ("azure connection string de", "de",
     "Warum bekomme ich 403 mit diesem Connection String?\nDefaultEndpointsProtocol=https;AccountName=shopdata;"
     "AccountKey=" + AZ_KEY, AZ_KEY),
    ("mysql -p attached", "en",
     f"I run this nightly but it fails:\nmysqldump -u backup -p{PW2} --single-transaction shop > shop.sql", PW2),
    ("mysql -p quoted zh", "zh", f"为什么这条命令报错？\nmysql -h 10.0.3.7 -u root -p'{PW}' -e 'show databases'", PW),
    ("mysql --password=", "en", f"mysql --host=db --user=app --password={PW2} shop < schema.sql", PW2),
    ("curl -u user:pass", "en",
     f"curl -u deploy:{PW2} -X POST https://ci.example.com/job/build/buildWithParameters", PW2),
    ("curl full path", "ja", f"このcronが401になります: */5 * * * * /usr/bin/curl -s -u monitor:{PW2} https://status.example.jp",
     PW2),
    ("curl --user fr", "fr", f"Pourquoi j'ai une 401 ?\ncurl --user admin:{PW} https://nexus.interne.fr/service/rest", PW),
    ("docker login -p", "en",
     f"docker login -u ci-bot -p {PW2} registry.gitlab.example.com\nWARNING! Using --password via the CLI is insecure.",
     PW2),
    ("docker hub token", "es", f"¿Por qué falla el push? Uso este token: {DOCKER_PAT}", DOCKER_PAT),
    ("login positional python", "code",
     f'import ftplib\nftp = ftplib.FTP("ftp.example.org")\nftp.login("deploy", "{PW}")\nftp.cwd("/var/www")', PW),
    ("connect positional python", "code",
     f'conn = pymysql.connect("db.internal", "shop", "{PW2}", "shop_prod")\ncur = conn.cursor()', PW2),
    ("getConnection java", "code",
     'Connection c = DriverManager.getConnection("jdbc:postgresql://db:5432/app", "app", "' + PW + '");', PW),
    ("smtp login ja", "ja", f'このコードでメールが送れません。\nserver.login("noreply@example.jp", "{PW2}")', PW2),
    ("medical record en", "en",
     "Patient: Margaret Ellison\nDOB: 03/14/1958\nMRN: 00482913\nDiagnosis: Type 2 diabetes mellitus with neuropathy\n"
     "Please summarise for the referral letter.", "00482913"),
    ("medical record de", "de",
     "Bitte Arztbrief kürzen: Patient Hans Weber, geb. 12.07.1961, Patientennummer 7734120, "
     "Diagnose: Vorhofflimmern, arterielle Hypertonie.", "7734120"),
    ("medical record zh", "zh",
     "患者：王秀英，出生日期：1972年5月3日，病历号：ZY20231187，诊断：2型糖尿病伴周围神经病变。请帮我写出院小结。", "20231187"),
    ("medical record es", "es",
     "Paciente: Lucía Fernández, fecha de nacimiento 22/09/1985, historia clínica nº 5561023, "
     "diagnóstico: asma bronquial persistente.", "5561023"),
    ("medical record fr", "fr",
     "Patiente : Claire Martin, née le 04/11/1990, n° de dossier 88412077, diagnostic : sclérose en plaques.",
     "88412077"),
    ("kubeconfig client-key-data", "yaml",
     "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    client-certificate-data: " + CERT_DATA[:60]
     + "\n    client-key-data: " + KEY_DATA + "\n", KEY_DATA[40:80]),
    ("chinese name mobile address", "zh", "收货人：李娜，手机13912345678，地址：上海市浦东新区世纪大道 100 号 2 楼",
     "13912345678"),
    ("chinese name mobile address 2", "zh", "联系人张伟 电话:18600001111 住址 广州市天河区体育西路103号", "18600001111"),
    # -- vendor key formats --------------------------------------------------------------------------
    ("stripe webhook secret", "code", "endpoint_secret = '" + _t("whsec_", "FAKE0fake1FAKE2fake3FAKE4fake5FA") + "'",
     "FAKE0fake1FAKE2"),
    ("stripe restricted", "en", "rotate " + _t("rk_live_", "51FAKEfake0123456789abcdefFAKE"), "51FAKEfake"),
    ("twilio api key", "en", "twilio keys:create returned " + _t("SK", "0123456789abcdef0123456789abcdef"), "0123456789abc"),
    ("shopify token", "en", "X-Shopify-Access-Token: " + _t("shpat_", "0123456789abcdef0123456789abcdef"), "0123456789abc"),
    ("square token", "en", "SQUARE=" + _t("sq0atp-", "FAKEfake0123456789FAKE"), "FAKEfake0123"),
    ("new relic key", "en", "newrelic key " + _t("NRAK-", "FAKE0FAKE1FAKE2FAKE3FAKE4FA"), "FAKE0FAKE1"),
    ("vault token", "ru", "почему vault отвечает 403 с токеном " + _t("hvs.", "CAESIFAKEfake0123456789FAKEfake"), "CAESIFAKE"),
    ("doppler token", "en", "doppler run --token " + _t("dp.st.", "prd.FAKEfake0123456789FAKEfake0123456789ab"), "FAKEfake01"),
    ("linear key", "en", "Authorization: " + _t("lin_api_", "FAKEfake0123456789FAKEfake0123456789FAKE"), "FAKEfake0123"),
    ("atlassian token", "en", "jira token " + _t("ATATT3xFfGF0", "FAKEfake0123456789_-" * 9 + "=ABCD1234"), "FAKEfake0123"),
    ("digitalocean token", "en", "doctl auth init -t " + _t("dop_v1_", "0123456789abcdef" * 4), "0123456789abcdef0"),
    ("cloudflare origin ca", "en", "key " + _t("v1.0-", "0123456789abcdef01234567-" + "0123456789abcdef" * 9 + "01"),
     "0123456789abcdef01"),
    ("databricks token", "en", "DATABRICKS_HOST=x\ntoken " + _t("dapi", "0123456789abcdef0123456789abcdef"), "0123456789abcd"),
    ("postman key", "en", "x-api-key: " + _t("PMAK-", "0123456789abcdef01234567-" + "0123456789abcdef" * 2 + "01"),
     "0123456789abcdef0"),
    ("telegram bot token", "ru", "бот не отвечает, токен " + _t("1234567890:AA", "FAKEfake0123456789FAKEfake0123456"),
     "FAKEfake0123"),
    ("azure ad client secret", "en", "client secret value " + _t("abc8Q~", "FAKEfake0123456789FAKEfake01234.~"), "FAKEfake0123"),
    ("google oauth secret", "en", '"client_id": "123.apps.googleusercontent.com", "x": "'
     + _t("GOCSPX-", "FAKEfake0123456789FAKEfake01") + '"', "FAKEfake0123"),
    ("age secret key", "en", _t("AGE-SECRET-KEY-1", "QFAKEQFAKE0123456789QFAKEQFAKE0123456789QFAKEQFAKE01234567"),
     "QFAKEQFAKE0123"),
    ("grafana service token", "en", "grafana " + _t("glsa_", "FAKEfake0123456789FAKEfake012345_0123abcd"), "FAKEfake0123"),
    ("sentry token", "en", "SENTRY " + _t("sntryu_", "0123456789abcdef" * 4), "0123456789abcdef01"),
    ("supabase token", "en", "supabase login --token " + _t("sbp_", "0123456789abcdef0123456789abcdef01234567"),
     "0123456789abcdef01"),
    ("gitlab runner token", "en", "gitlab-runner register --token " + _t("glrt-", "FAKEfake0123456789_FAKE"), "FAKEfake0123"),
    ("xai key", "en", "XAI " + _t("xai-", "FAKEfake0123456789" * 4 + "FAKEfake"), "FAKEfake0123"),
    ("perplexity key", "en", "pplx " + _t("pplx-", "FAKEfake0123456789" * 2 + "FAKEfake0123"), "FAKEfake0123"),
    ("replicate token", "en", "export REPLICATE=" + _t("r8_", "FAKEfake0123456789FAKEfake0123456789F"), "FAKEfake0123"),
    ("google oauth access token", "en", "curl -H 'X: " + _t("ya29.", "a0FAKEfake0123456789FAKEfake0123456789") + "'",
     "FAKEfake0123"),
    ("terraform cloud token", "en", 'token = "' + _t("FAKEfake012345.atlasv1.", "FAKEfake0123456789" * 4) + '"',
     "FAKEfake0123456789F"),
    ("brevo key", "en", _t("xkeysib-", "0123456789abcdef" * 4 + "-FAKEfake01234567"), "0123456789abcdef0"),
    ("tencent secret id", "zh", "腾讯云 SecretId: " + _t("AKID", "FAKEfake0123456789FAKEfake012345"), "FAKEfake0123"),
    ("alibaba access key", "zh", "阿里云 AccessKey ID " + _t("LTAI", "5tFAKEfake0123456"), "5tFAKEfake"),
    ("heroku token", "en", "heroku " + _t("HRKU-", "FAKEfake0123456789-" * 3 + "FAKE"), "FAKEfake0123"),
    ("notion token", "en", "NOTION=" + _t("ntn_", "12345678901FAKEfake0123456789FAKEfake012345"), "FAKEfake0123"),
    ("discord webhook", "en", "https://discord.com/api/webhooks/123456789012345678/"
     + "FAKEfake0123456789FAKEfake0123456789FAKEfake0123456789FAKEfake01", "FAKEfake0123"),
    # -- encoded secrets -----------------------------------------------------------------------------
    ("base64 private key in prose", "en", "my teammate sent me this, what is it?\n" + KEY_DATA[:400], KEY_DATA[40:80]),
    ("hex private key", "en", "payload = bytes.fromhex('" + HEX_KEY[:600] + "')", HEX_KEY[60:120]),
    ("base64 dotenv", "ko", "이 base64 값이 뭔지 알려주세요: " + B64_DOTENV, B64_DOTENV),
    # -- command lines of other tools, secrets in URLs -----------------------------------------------
    ("PGPASSWORD", "en", f"PGPASSWORD={PW2} psql -h db.internal -U app -c 'select 1'", PW2),
    ("redis-cli -a", "en", f"redis-cli -h cache.internal -p 6379 -a {PW2} ping", PW2),
    ("sshpass", "zh", f"sshpass -p '{PW}' ssh root@10.0.0.12 'uptime'  # 为什么卡住", PW),
    ("htpasswd -b", "en", f"htpasswd -bc /etc/nginx/.htpasswd admin {PW2}", PW2),
    ("git clone with token", "en", "git clone https://oauth2:" + "FAKEfake0123456789FAKE@git.example.com/team/app.git",
     "FAKEfake0123456789FAKE"),
    ("--token flag", "en", "vault login --method=token --token " + "FAKEfake0123456789FAKE", "FAKEfake0123456789FAKE"),
    ("--api-key flag", "de", f"Warum schlägt das fehl?\nmeilisearch --master-key {PW2} --env production", PW2),
    ("ldapsearch -w", "en", f"ldapsearch -x -H ldap://dc1 -D 'cn=admin,dc=corp' -w {PW2} -b 'dc=corp'", PW2),
    ("smbclient -U user%pass", "en", f"smbclient //fs01/share -U backup%{PW2} -c 'ls'", PW2),
    ("openssl -passout", "en", f"openssl pkcs12 -export -in a.crt -inkey a.key -out a.p12 -passout pass:{PW2}", PW2),
    ("keytool -storepass", "en", f"keytool -importcert -file ca.crt -keystore trust.jks -storepass {PW2} -noprompt", PW2),
    ("signed url", "en", "download fails: https://acme.blob.core.windows.net/exports/q3.csv?sv=2022-11-02&ss=b&srt=o"
     "&sp=r&se=2026-12-31T00:00:00Z&sig=" + "FAKEfake0123456789FAKEfake0123456789ab%2Bcd%3D", "FAKEfake0123"),
]

CONTROLS: list[tuple[str, str, str]] = [
    ("azure placeholder", "code",
     'var conn = "DefaultEndpointsProtocol=https;AccountName=<account>;AccountKey=<your-account-key>;";'),
    ("azurite dev key", "code", "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + AZURITE_KEY
     + ";BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"),
    ("azure key from env", "code", 'conn = f"AccountName={name};AccountKey={os.environ[\'AZ_KEY\']}"'),
    ("mysql prompts", "en", "mysql -u root -p -h db.internal shop"),
    ("mysql -p with variable", "en", 'mysqldump -u backup -p"$MYSQL_PASSWORD" shop > shop.sql'),
    ("mysql -p env var", "en", "mysql -uroot -p$DB_PASS -e 'select 1'"),
    ("docker ports", "en", "docker run -d -p 8080:80 -p 5432:5432 --name web nginx"),
    ("ssh port", "en", "ssh -p 2222 deploy@10.0.0.12 && scp -P 2222 a.txt deploy@10.0.0.12:"),
    ("curl env creds", "en", "curl -u $USER:$TOKEN https://api.example.com/v1/items"),
    ("curl docs placeholder", "en", "curl -u user:password https://httpbin.org/basic-auth/user/password"),
    ("curl user only", "en", "curl -u alice https://example.com/private  # prompts for the password"),
    ("curl api key placeholder", "en", "curl -u YOUR_API_KEY: https://api.stripe.com/v1/charges"),
    ("docker login stdin", "en",
     'echo "$CI_REGISTRY_PASSWORD" | docker login -u "$CI_REGISTRY_USER" --password-stdin $CI_REGISTRY'),
    ("docker login variable", "en", "docker login -u gitlab-ci-token -p $CI_JOB_TOKEN registry.gitlab.com"),
    ("docker build secret", "en", "docker build --secret id=npmrc,src=$HOME/.npmrc -t app ."),
    ("login with variables", "code", "ftp.login(user, password)\nclient.connect(host, port, username, secret)"),
    ("login placeholder", "code", 'server.login("user@example.com", "password")\nclient.auth("admin", "admin")'),
    ("connect host port", "code", 'conn = psycopg2.connect("dbname=test user=postgres")\nsock.connect(("10.0.0.5", 8080))'),
    ("signal connect", "code", 'button.connect("clicked", self.on_clicked)\nauth_failed("bad token", "retry later")'),
    ("login getpass", "code", 'ftp.login("deploy", getpass.getpass())'),
    ("medical prose", "en", "What is the difference between an MRN and a patient account number? Our DOB field "
                            "also needs validation, and the diagnosis list comes from ICD-10."),
    ("medical form template", "en", "Patient: ____________\nDOB: __/__/____\nMRN: ________\nDiagnosis: ____________"),
    ("medical record id only", "de", "Die Patientennummer 7734120 ist doppelt vergeben, wie finde ich das Duplikat?"),
    ("chinese medical prose", "zh", "病历号和住院号有什么区别？诊断编码用ICD-10。"),
    ("certificate data", "yaml", "clusters:\n- cluster:\n    certificate-authority-data: " + CERT_DATA + "\n"
                                 "    server: https://10.0.0.1:6443\n"),
    ("base64 prose", "en", "decode " + base64.b64encode(b"the quick brown fox jumps over the lazy dog again").decode()),
    ("base64 png", "en", "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kg"
     "AAAABJRU5ErkJggg=="),
    ("sha256 hex", "en", "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
    ("chinese address no phone", "zh", "我们公司在上海市浦东新区世纪大道100号，欢迎来访。"),
    ("chinese hotline", "zh", "客服热线 400-820-8820，工作日 9:00-18:00。"),
    ("order number", "zh", "订单号 13912345678901234，地址：上海市浦东新区世纪大道 100 号"),
    ("max tokens flag", "en", "llama-server --max-tokens 4096 --token-limit 8192 --api-key-file /run/secrets/key"),
    ("token flag from env", "en", 'gh release upload v1 --token "$GITHUB_TOKEN" dist/*'),
    ("redis-cli port", "en", "redis-cli -h cache -p 6379 ping"),
    ("sshpass env", "en", "sshpass -e ssh root@10.0.0.12"),
    ("htpasswd prompt", "en", "htpasswd -c /etc/nginx/.htpasswd admin"),
    ("git clone plain", "en", "git clone https://github.com/acme/app.git && git clone git@github.com:acme/app.git"),
    ("openssl passin file", "en", "openssl rsa -in key.pem -passin file:/run/secrets/pass -out key.der"),
    ("keytool prompt", "en", "keytool -genkeypair -alias app -keystore app.jks -storepass:env STOREPASS"),
    ("stripe docs test key", "en", "Stripe's docs use sk_test_4eC39HqLyjWDarjtT1zdp7dc in every example."),
    ("signed url docs", "en", "A SAS URL looks like https://myaccount.blob.core.windows.net/c/b?sv=2022-11-02&sig=<signature>"),
    ("smbclient user", "en", "smbclient -L //fs01 -U alice"),
    ("ldapsearch prompt", "en", "ldapsearch -x -W -D 'cn=admin,dc=corp' -b 'dc=corp'"),
    ("SK word", "en", "SKU list: SKATEBOARD-0001, SKI-POLE-22"),
    ("dapi prose", "en", "the dapi package and the dapilot tool"),
    ("curl inside a longer name", "en", "libcurl -u is not a command; pycurl -u neither"),
]
