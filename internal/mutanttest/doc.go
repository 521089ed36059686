// Package mutanttest proves a conformance suite can fail. A suite that
// passes everything proves nothing, so each mutant (an implementation with
// one contract broken) runs the suite in a child process of the test binary,
// and the case named must fail there. The child is a separate process
// because a failing suite fails its *testing.T, which cannot be faked.
package mutanttest
