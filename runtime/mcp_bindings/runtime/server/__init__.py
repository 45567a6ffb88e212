"""The server side: the dispatch runtime, the server host and its lifecycle, version bridging,
notifications, handler contexts and stubs.
"""
