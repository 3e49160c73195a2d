// `Locked` and `ComputedOnce` live in the Locking target; every module that imports Capture (the
// control surfaces, the CLI, the benchmarks, the tests) uses them as before.
@_exported import Locking
