from prixfixe.cli import main

main()
