"""The one thing pyproject.toml cannot say: the optional C fast path for OTLP decoding.

`optional=True`: where no C compiler exists the install still succeeds and passhat.collector.ingest._otlp falls back
to the upb decoder (CI sets CI=1 and a test then requires the compiled module).
"""

from __future__ import annotations

import os

from setuptools import Extension, setup

FLAGS = [] if os.name == "nt" else ["-O2", "-Wall"]

setup(
    ext_modules=[
        Extension(
            "passhat.collector.ingest._otlpfast",
            sources=["collector/ingest/_otlpfast.c"],
            extra_compile_args=FLAGS,
            optional=True,
        )
    ]
)
