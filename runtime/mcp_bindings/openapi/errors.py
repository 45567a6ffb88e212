"""The one exception type reading and lowering an OpenAPI description raises."""


class DescriptionError(Exception):
    """A problem with the description (or a route map, or the options) that its user can fix; the
    generator reports it as a `BindgenError`, `App.openapi` raises it as it is."""
