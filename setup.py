"""Build hook: the package map, found automatically, and the five optional C extensions.

The repository keeps the library in `core/` and the app in `viewer/`, but the
distribution claims a single import name, `transcript_view`: `core/` installs
as `transcript_view.core` and `viewer/` as `transcript_view.viewer`. Packages
are discovered (every folder with an `__init__.py` under the two), so a new
subpackage can never silently go missing from the wheel; the packaging test
builds the wheel and imports every module from a clean install to prove it.

`transcript_view.core._gcount` counts grapheme clusters with the GIL released
(see core/_gcount.c); `transcript_view.core._lines` finds line starts with
memchr for the line index (core/_lines.c); `transcript_view.core._map` is the
analysis pass's loop over raw lines (core/_map.c, with core/_fold.c for the fold of
their operations); `transcript_view.viewer._rows`
counts the file view's rows of a plain line as the analysis reads it
(viewer/_rows.c, and viewer/_session_rows.c for the other formats);
`transcript_view.viewer._layout` keeps the row layout's prefix sums
(viewer/_layout.c). All are
`optional`: on a machine without a C compiler the install still succeeds and
the same work runs in pure Python, with the same answers, only slower.
"""

from setuptools import Extension, find_packages, setup

#: import name -> folder in the repository.
ROOTS = {"transcript_view": "transcript_view", "transcript_view.core": "core",
         "transcript_view.viewer": "viewer"}


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
        "transcript_view.core": ["_gcount.pyi", "_lines.pyi", "_map.pyi"],
        "transcript_view.viewer": ["_layout.pyi", "_rows.pyi"],
    },
    exclude_package_data={"transcript_view.core": ["*.c"], "transcript_view.viewer": ["*.c"]},
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
        Extension(
            "transcript_view.core._map",
            sources=["core/_map.c", "core/_fold.c"],
            depends=["core/_map.h"],
            optional=True,
        ),
        Extension(
            "transcript_view.viewer._rows",
            sources=["viewer/_rows.c", "viewer/_session_rows.c"],
            depends=["viewer/_rows.h"],
            optional=True,
        ),
        Extension(
            "transcript_view.viewer._layout",
            sources=["viewer/_layout.c"],
            optional=True,
        ),
    ],
)
