// Command guardtrain trains the guard's learned layer from the third-party
// corpus (../shared/guardcorpus, or -corpus) and the project's own corpus
// (guard/testdata/corpus), and writes the weights the guard embeds:
//
//	go run ./internal/cmd/guardtrain [-out guard/model.bin]
//
// Training is deterministic: a fixed seed and a fixed order give the same
// weights on every run on the same architecture (floating point may round
// differently where the compiler fuses multiply-adds, as on arm64).
package main
