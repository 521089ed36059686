// Package guardmodel is the guard's learned layer: a linear classifier over
// hashed features of the guard's normalized text, scored over windows.
//
// Features are character 3-, 4- and 5-grams of the normalized bytes, two-
// and three-character grams in scripts of three-byte characters (Chinese,
// Japanese, Korean), and word unigrams and bigrams. Character n-grams
// carry a word's evidence through a typo ("everthing" shares most of its
// grams with "everything"), an inflection or a compound, and work in
// scripts without spaces; words and word pairs carry phrasing. The
// normalized view (case folded, look-alike letters folded, invisible
// characters removed, whitespace collapsed) removes the disguises before
// any feature is taken. Each feature is hashed to one of 2^Bits signed
// buckets: the sign halves the bias of collisions, and without it the
// false positives on benign sources left out of training went from 7.6%
// to 12.6%. Byte grams are hashed with one multiply each, the rest byte
// by byte.
//
// A text is scored over windows (every 192 and 512 bytes at half overlap,
// and the whole text when short), each window's score being the bias plus
// the window's summed weights over the square root of its feature count
// plus a prior; the text's score is its best window's. An instruction
// planted in a long benign document thus scores as it would alone. Every
// feature belongs to the byte position it starts at, so a window's sum is
// a difference of prefix sums, kept every 32 bytes where windows start and
// end, and the windows cost nothing beyond one pass over the text.
package guardmodel
