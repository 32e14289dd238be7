"""Build hook for the one optional C extension; everything else is in pyproject.toml.

`core._gcount` counts grapheme clusters with the GIL released (see
core/_gcount.c). It is `optional`: on a machine without a C compiler the
install still succeeds and `core.graphemes` counts in pure Python, with the
same answers, only slower.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "core._gcount",
            sources=["core/_gcount.c"],
            optional=True,
        )
    ]
)
