// Command guardeval measures the guard on the third-party corpus of
// ../shared/guardcorpus and the project's own corpus: recall per source,
// family and language, and false positives per benign source.
//
//	go run ./internal/cmd/guardeval [-loso] [-corpus dir]
//
// It prints, in order: the shipped guard (rules and learned layer, the
// Engine's verdict Injection() >= Medium, documents through CheckDocument
// as the Engine scans tool results) and the rules alone, first on the
// project's held-out rows (other languages, hard negatives), then on
// everything, and with -loso the
// leave-one-source-out figures: for each source, a model trained without
// it scores it, alone and together with the rules. Only the last are an
// honest estimate for attacks nobody here wrote: the shipped model was
// trained on every source but the held-out ones.
package main
