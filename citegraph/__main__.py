from citegraph.cli import main

main()
