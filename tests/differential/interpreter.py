"""The Python interpreter whose numpy a differential run asks (``--numpy PATH``).

The generator writes its files with numpy, the mutator and the deviation
predicates read numpy's objects, and the oracle is numpy's reader: so the
whole run moves to that interpreter, before anything imports numpy. Standard
library only, since the interpreter that starts the run may have no numpy.
"""

import argparse
import importlib.util
import os
import shutil
import sys

DEFAULT = "/usr/bin/python3"

# Set in the environment of the re-executed run: a wrapper script whose
# sys.executable is not its own path must not re-execute forever.
_RUNNING_UNDER = "NPYGUARD_DIFFERENTIAL_PYTHON"


def add_option(parser):
    parser.add_argument("--numpy", default=DEFAULT, metavar="PATH",
                        help="the Python interpreter whose numpy is the oracle; the run re-executes "
                             "under it (default %s)" % DEFAULT)


def run_under_requested(script, argv):
    """Re-executes ``script`` with ``argv`` under --numpy's interpreter and
    does not return, unless this process already is that interpreter."""
    pre = argparse.ArgumentParser(add_help=False)
    add_option(pre)
    wanted_name = pre.parse_known_args(argv)[0].numpy
    wanted = shutil.which(wanted_name)
    if wanted is None:
        print("--numpy %s: no such executable" % wanted_name, file=sys.stderr)
        sys.exit(2)
    wanted = os.path.abspath(wanted)
    if os.environ.get(_RUNNING_UNDER) == wanted or os.path.abspath(sys.executable) == wanted:
        if importlib.util.find_spec("numpy") is None:
            print("--numpy %s: %s has no numpy" % (wanted_name, sys.executable), file=sys.stderr)
            sys.exit(2)
        return
    sys.stdout.flush()
    os.execve(wanted, [wanted, script, *argv], dict(os.environ, **{_RUNNING_UNDER: wanted}))
