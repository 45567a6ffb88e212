"""An OpenAPI description read and lowered to the IR both sides use: the generator
(`mcp-bindgen openapi`, which renders the IR into a package) and the runtime (`App.openapi`, which
serves the IR's operations without generating anything).

Staged: `load` (a file or https URL; JSON or YAML; Swagger 2.0 converted by `swagger2`) ->
`normalise` (schemas as JSON Schema definitions, references resolved) -> `lower` (the IR of `ir.py`:
operations, parameters, bodies, responses, security schemes; `routes` decides tool, resource or left
out). This package imports neither the generator nor the runtime (an import-linter contract).
"""
