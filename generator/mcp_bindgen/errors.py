"""The one exception type the generator raises for problems a user can fix."""


class BindgenError(Exception):
    """A clear, user-facing failure (bad pin, stale patch, name clash, drift). The CLI prints it and exits 1."""
