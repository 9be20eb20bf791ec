import app

app.main()
