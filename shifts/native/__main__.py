"""`python -m shifts.native`: build the compiled shifts if needed, and say where or why not."""

from shifts.native import main

main()
