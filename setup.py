"""Build hook: the package map, found automatically, and the two optional C extensions.

The repository keeps the library in `core/` and the app in `viewer/`, but the
distribution claims a single import name, `transcript_view`: `core/` installs
as `transcript_view.core` and `viewer/` as `transcript_view.viewer`. Packages
are discovered (every folder with an `__init__.py` under the two), so a new
subpackage can never silently go missing from the wheel; the packaging test
builds the wheel and imports every module from a clean install to prove it.

`transcript_view.core._gcount` counts grapheme clusters with the GIL released
(see core/_gcount.c); `transcript_view.core._lines` finds line starts with
memchr for the line index (core/_lines.c). Both are leaf loops over a buffer
whose tables and rules are built in Python, and both are `optional`: on a
machine without a C compiler the install still succeeds and the same work runs
in pure Python, with the same answers, only slower.
"""

from setuptools import Extension, find_packages, setup

#: import name -> folder in the repository.
ROOTS = {"transcript_view": "transcript_view", "transcript_view.core": "core",
         "transcript_view.viewer": "viewer", "transcript_view.fleet": "fleet"}


def _packages() -> list[str]:
    out = []
    for name, folder in ROOTS.items():
        out.append(name)
        if name != "transcript_view":
            out += [f"{name}.{sub}" for sub in find_packages(where=folder)]
    return out


setup(
    packages=_packages(),
    package_dir=ROOTS,
    package_data={
        "transcript_view": ["py.typed"],
        "transcript_view.core": ["_gcount.pyi", "_lines.pyi"],
    },
    exclude_package_data={"transcript_view.core": ["*.c"]},
    ext_modules=[
        Extension(
            "transcript_view.core._gcount",
            sources=["core/_gcount.c"],
            optional=True,
        ),
        Extension(
            "transcript_view.core._lines",
            sources=["core/_lines.c"],
            optional=True,
        ),
    ],
)
