"""The server half of tasks, a plug-in on the dispatch seam (`plugin`): the task service of a server
object (`service`), what runs around a handler where tasks apply (`hooks`), the context of a task's
work (`context`), running work as a task in the handshake era (`running`), the tasks/* methods the
runtime serves (`methods`), the 2026-07-28 tasks extension (`extension`) and server-to-client task
requests (`outgoing`)."""
