package assistant

// KeepEnd exposes keepEnd to the external tests.
var KeepEnd = keepEnd
