#!/usr/bin/env python
"""Django's command-line utility for PaceLab."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pacelab.settings")
    from django.core.management import execute_from_command_line

    from pacelab.dbstate import run_command

    # every command: an unprepared database is explained (run `manage.py prepare`), not a traceback
    run_command(sys.argv, execute_from_command_line)


if __name__ == "__main__":
    main()
