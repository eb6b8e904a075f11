from realrecall.cli import main

main()
