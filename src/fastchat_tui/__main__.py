from fastchat_tui.cli import main

raise SystemExit(main())
