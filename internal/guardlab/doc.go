// Package guardlab trains and measures the guard's learned layer: it trains
// the linear model of internal/guardmodel on the samples of
// internal/guardcorpus and scores detectors per source, family and
// language, including leave-one-source-out runs. The guardtrain and
// guardeval commands use it.
package guardlab
