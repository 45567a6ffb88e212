"""Peer servers used by the benchmarks.

Every module in this folder is run as a standalone script (``python path/to/x.py``)
by an interpreter of its own venv, so none of them imports the ``benchmarks``
package: the official peers see only the official SDK, the floor peers only the
standard library (plus uvicorn for the HTTP floor).
"""
