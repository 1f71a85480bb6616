# pystitch record's start-up hook, run by every Python process that a
# recorded command starts (record puts this file's directory first on
# PYTHONPATH as sitecustomize.py, with PYSTITCH_RECORD_CACHE naming the
# cache of built modules). It turns on the pystitch_perf module, built
# for that interpreter on first use: on CPython 3.7-3.11 its trampolines
# give Python frames names as -X perf gives them on 3.12+ (record sets
# PYTHONPERFSUPPORT=1 for those), and on every version it writes the side
# file of line tables that gives each Python frame its line. Then it steps
# aside: it leaves sys.path
# as it found it and runs the sitecustomize this one hides, if any.
# Written for every interpreter that may read it, Python 2.7 included:
# no syntax newer than 2.7's.
#
# Run as a script (python HOOK --prepare) it builds the module for that
# interpreter if needed and prints one line, which record reports before
# recording starts: "ready VERSION MODULE", "names VERSION WHY" (3.12+
# names its frames itself, but gets no lines) or "unnamed VERSION WHY".
import os
import sys

# the module's sources, beside this file (pystitch_perf.h too)
MODULE_SOURCES = ("pystitch_perf.c", "pystitch_perf_lines.c")


def _version():
    return "%d.%d" % tuple(sys.version_info[:2])


def _build_tag():
    """One directory per interpreter build the module is compiled for:
    version, ABI flags and the headers' directory."""
    import hashlib
    import sysconfig
    include = sysconfig.get_paths().get("include") or ""
    key = "%s|%s|%s|%s" % (sys.version, getattr(sys, "abiflags", ""), include,
                           sysconfig.get_config_var("EXT_SUFFIX") or "")
    return "%s-%s" % (_version(), hashlib.sha256(key.encode("utf-8")).hexdigest()[:16])


def _module_file(cache):
    import sysconfig
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return os.path.join(cache, "build", _build_tag(), "_pystitch_perf" + suffix)


def _compiler():
    """The C compiler to use as argv: $CC, the interpreter's own, or cc."""
    import shlex
    import sysconfig
    for candidate in (os.environ.get("CC"), sysconfig.get_config_var("CC"), "cc", "gcc"):
        if not candidate:
            continue
        words = shlex.split(candidate)
        if words and _which(words[0]):
            return words
    return None


def _which(name):
    if os.sep in name:
        return os.access(name, os.X_OK) and name
    for directory in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep):
        path = os.path.join(directory or ".", name)
        if os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    return None


def build(cache, source_dir):
    """The module's path, built for this interpreter if it was not: None
    and why when it cannot be."""
    import subprocess
    import sysconfig
    target = _module_file(cache)
    if os.path.exists(target):
        return target, None
    include = sysconfig.get_paths().get("include") or ""
    if not os.path.exists(os.path.join(include, "Python.h")):
        return None, ("no Python.h in %s: install python%s's development headers "
                      "(Debian: python%s-dev)" % (include or "its include directory",
                                                   _version(), _version()))
    compiler = _compiler()
    if not compiler:
        return None, "no C compiler (cc) found: install one (Debian: build-essential)"
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        try:
            os.makedirs(directory, 0o700)
        except OSError:
            if not os.path.isdir(directory):
                raise
    import fcntl
    lock = open(os.path.join(directory, ".lock"), "w")
    try:
        # several processes of a fresh interpreter may start at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(target):
            return target, None
        partial = "%s.%d.tmp" % (target, os.getpid())
        command = compiler + ["-O2", "-g", "-std=gnu99", "-fPIC", "-shared",
                              "-I" + include]
        platinclude = sysconfig.get_paths().get("platinclude")
        if platinclude and platinclude != include:
            command.append("-I" + platinclude)
        command += ["-o", partial] + [os.path.join(source_dir, name) for name in MODULE_SOURCES]
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        output = child.communicate()[0]
        if child.returncode != 0:
            lines = output.decode("utf-8", "replace").strip().splitlines()
            errors = [line for line in lines if "error" in line] or lines
            return None, "building pystitch_perf failed: %s" % (errors[0] if errors else
                                                                 "%s exited with status %d" %
                                                                 (command[0], child.returncode))
        os.rename(partial, target)
        return target, None
    finally:
        lock.close()


def _load(path):
    """Import _pystitch_perf from path without touching sys.path."""
    if sys.version_info >= (3, 5):
        import importlib.util
        spec = importlib.util.spec_from_file_location("_pystitch_perf", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        import imp
        module = imp.load_dynamic("_pystitch_perf", path)
    sys.modules["_pystitch_perf"] = module
    return module


def enable(cache, source_dir):
    """Turn the module on in this process: None, or why not."""
    if sys.version_info[:2] < (3, 7):
        return None
    path, why = build(cache, source_dir)
    if not path:
        return why
    _load(path).enable()
    return None


def _chain(here):
    """Run the sitecustomize this one hides (Debian's, a virtualenv's)."""
    saved = sys.modules.pop("sitecustomize", None)
    kept = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != here]
    sys.path[:] = kept
    try:
        import sitecustomize  # noqa: F401 (the next one on sys.path)
    except ImportError as error:
        # only a missing sitecustomize is quiet: its own import errors show
        if getattr(error, "name", "sitecustomize") not in (None, "sitecustomize"):
            raise
        if saved is not None:
            sys.modules["sitecustomize"] = saved


def _startup():
    here = os.path.dirname(os.path.abspath(__file__))
    cache = os.environ.get("PYSTITCH_RECORD_CACHE")
    # 3.12+ names its frames itself (PYTHONPERFSUPPORT): only lines go
    lost = "no line numbers" if sys.version_info[:2] >= (3, 12) else "Python frames unnamed"
    try:
        if cache and sys.version_info[:2] >= (3, 7):
            why = enable(cache, here)
            if why:
                sys.stderr.write("pystitch record: %s (pid %d): %s: %s\n" %
                                 (os.path.basename(sys.executable or "python"), os.getpid(),
                                  lost, why))
    except Exception as error:  # the program must start whatever happens here
        sys.stderr.write("pystitch record: %s (pid %d): %s: %s\n" %
                         (os.path.basename(sys.executable or "python"), os.getpid(), lost,
                          error))
    _chain(here)


def _prepare():
    """python HOOK --prepare: the line record reads before it starts."""
    here = os.path.dirname(os.path.abspath(__file__))
    version = _version()
    if sys.version_info[:2] >= (3, 7):
        path, why = build(os.environ.get("PYSTITCH_RECORD_CACHE", here), here)
        if path:
            print("ready %s %s" % (version, path))
        else:
            print("%s %s %s" % ("names" if sys.version_info[:2] >= (3, 12) else "unnamed",
                                version, why))
    else:
        print("unnamed %s CPython %s has no perf support (3.7 or newer is needed)" %
              (version, version))


if __name__ == "__main__":
    if sys.argv[1:] == ["--prepare"]:
        _prepare()
    else:
        sys.stderr.write("usage: python sitecustomize.py --prepare\n")
        sys.exit(2)
else:
    _startup()
