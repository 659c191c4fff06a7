"""`--kata-report PATH` with a space, where PATH is an existing file outside the clone.

pytest reads its command line twice. The first time, before any plugin of the kit is known,
`--kata-report` is an unknown option and PATH looks like a test path; pytest then chooses
its rootdir (and its ini file, and the conftest.py files it loads first) from PATH, finds
neither the clone's pyproject.toml nor its conftest.py, and stops with "unrecognized
arguments" (pytest issues #906, #13913). `--kata-report=PATH` never had the problem.

This module is a pytest plugin loaded through an entry point (pyproject.toml, `pytest11`;
`pip install -e .` installs it), so before the conftest.py files: it takes the values of the kit's options back out of the
paths that choose the rootdir, and chooses again, as pytest would have without them. It
does nothing when no value of the kit's options was taken for a path, and nothing (today's
behaviour) on a pytest whose internals differ.
"""
import pytest

# The kit's options that take a value (plugin/grading/options.py; a test checks the two agree).
VALUE_OPTIONS = (
    "--kata-report", "--kata-learner", "--kata", "--kata-timeout", "--solution", "--cuda",
    "--kata-report-format", "--kata-html", "--kata-hard-limit", "--kata-memory-limit", "--kata-child-fd",
)


def option_values(args):
    """The arguments that are the values of the kit's options written with a space."""
    return [value for option, value in zip(args, args[1:]) if option in VALUE_OPTIONS]


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    values = option_values(args)
    namespace = early_config.known_args_namespace
    paths = list(namespace.file_or_dir)
    for value in values:
        if value in paths:
            paths.remove(value)
    if paths == namespace.file_or_dir:
        return
    try:
        _choose_rootdir_again(early_config, paths)
    except (AttributeError, TypeError, ImportError):  # another pytest: leave it as it was
        return


def _choose_rootdir_again(config, paths):
    from _pytest.config.findpaths import determine_setup

    namespace = config.known_args_namespace
    derived_cut = str(config.inipath.parent if config.inipath else config.rootpath)
    rootpath, inipath, inicfg, ignored = determine_setup(
        inifile=namespace.inifilename,
        override_ini=namespace.override_ini,
        args=paths,
        rootdir_cmd_arg=namespace.rootdir or None,
        invocation_dir=config.invocation_params.dir,
    )
    namespace.file_or_dir[:] = paths  # what the first conftest.py files are looked for from
    if (rootpath, inipath) == (config.rootpath, config.inipath):
        return
    config._rootpath, config._inipath, config._inicfg = rootpath, inipath, inicfg
    config._ignored_config_files = ignored
    config._inicache.clear()
    config._parser.extra_info["rootdir"] = str(rootpath)
    config._parser.extra_info["inifile"] = str(inipath)
    if namespace.confcutdir == derived_cut:  # not given on the command line: follows the rootdir
        namespace.confcutdir = str(inipath.parent if inipath else rootpath)
