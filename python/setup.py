"""Installs pystitch_perf: the C module _pystitch_perf, the package
pystitch_perf (enable/disable, python -m pystitch_perf) and
pystitch_perf.pth (PYSTITCH_PERF=1 at startup). Offline, with the
installing interpreter's headers:

    pip install --no-build-isolation ./python

`make -C python PYTHON=/path/to/python3.X` builds the same without pip.
"""
import os

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
PTH = "pystitch_perf.pth"


class build_py_with_pth(build_py):
    """Puts the .pth at the top of the build tree: it is installed into
    site-packages itself, where site.py runs its import line."""

    def run(self):
        super().run()
        self.copy_file(os.path.join(HERE, PTH), os.path.join(self.build_lib, PTH),
                       preserve_mode=0)

    def get_outputs(self, include_bytecode=1):
        return super().get_outputs(include_bytecode) + [os.path.join(self.build_lib, PTH)]


setup(
    name="pystitch_perf",
    version="0.1",
    description="perf-map trampolines for Python frames on CPython 3.7-3.11 "
                "(what -X perf does on 3.12+), for perf and pystitch",
    python_requires=">=3.7",
    packages=["pystitch_perf"],
    ext_modules=[Extension("_pystitch_perf",
                           sources=["pystitch_perf.c", "pystitch_perf_lines.c"],
                           depends=["pystitch_perf.h"],
                           extra_compile_args=["-std=gnu99"])],
    cmdclass={"build_py": build_py_with_pth},
    zip_safe=False,
)
