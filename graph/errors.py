"""The one exception hierarchy. The API maps these to client errors."""


class CitegraphError(Exception):
    """Base class for every error citegraph raises on purpose."""


class InputError(CitegraphError):
    """A corpus file or record could not be read."""


class NotFoundError(CitegraphError):
    """An id or name that is not in the graph."""


class InvalidArgumentError(CitegraphError):
    """An argument out of range or of the wrong form; ``argument`` names it."""

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(f"{argument}: {message}")
        self.argument = argument


class StoreError(CitegraphError):
    """The store failed (corrupt file, failed transaction)."""


class StoreWriteError(StoreError):
    """The store could not write a change it had accepted (disk full, I/O error):
    nothing was written, and the same write can succeed once the cause is gone."""


class StoreUnavailableError(StoreError):
    """The store cannot be reached (server down, wrong credentials)."""


class StoreReplacedError(StoreUnavailableError):
    """The database file was deleted or replaced since this process opened it: writes
    would land in the unlinked file and be lost, so they are refused."""


class QueryCancelledError(CitegraphError):
    """The query's deadline passed, or its caller stopped waiting (graph.deadline): the
    work was abandoned part way, nothing of it is returned."""


class ModelUnavailableError(CitegraphError):
    """The embedding model (or its optional dependency) cannot be loaded."""


class WriteLockTimeoutError(StoreError):
    """Another writer held the data folder's write lock for too long."""


class WriteLockLostError(StoreError):
    """A writer's hold on the store's write lock ended before it committed (the server
    ended the lock's transaction) and another writer has taken the lock since: the write
    is refused rather than committed over what the other writer read."""
