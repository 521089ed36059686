// Package guardcorpus loads the guard's labelled text: the third-party
// corpus of ../shared/guardcorpus (absent from a fresh clone: FindCorpus
// says so with ErrNoCorpus) and the project's own corpus under
// guard/testdata/corpus.
package guardcorpus
