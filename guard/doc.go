// Package guard scans what reaches the model: user input before any model
// call ([Guard.Check]) and tool arguments before any tool runs
// ([Guard.CheckArgs]). It finds prompt-injection attempts, personal data
// and credentials, and says what to do with the text: a [Result] with an
// [Action] (Allow < Flag < Warn < Redact < Block), a [Severity], the
// [Finding]s, and the text with PII redacted.
//
//	g, err := guard.New(guard.Config{}) // safe defaults
//	res := g.Check(ctx, userText)
//	switch res.Action {
//	case guard.Block:   // nothing of userText reaches the model
//	case guard.Redact:  // the model sees res.Redacted
//	case guard.Warn:    // the user is warned
//	}
//
// # Normalization
//
// Injection rules match a normalized view of the text, never the text
// itself, and every finding is reported with byte offsets into the
// original. The main view applies, in order: NFKC; space look-alikes
// (every Zs, U+1680, U+2800, U+3164, U+FFA0, U+115F, U+1160) to a space;
// Unicode tag characters (U+E0020–E007F) decoded into a separate view;
// default-ignorable code points removed (zero-width characters, bidi
// controls, variation selectors, soft hyphen: the whole
// Default_Ignorable_Code_Point set); case folding; confusable letters of
// Cyrillic, Greek, Armenian, Cherokee and Latin small capitals folded to
// the Latin letter they imitate; combining marks removed; whitespace
// collapsed. Two more views catch spelling tricks: a leetspeak view
// ("1gn0r3" reads "ignore") and a compact view of letters only ("i g n o r
// e" and "i.g.n.o.r.e" read "ignore"). [Normalize] exposes the views.
//
// A typo view reads a word one edit from a word of the English rules (a
// letter dropped, added or changed, or two neighbours swapped: "everthing",
// "ignroe", "teh") as that word, unless it is itself an English word
// ("decide" stays "decide", "ignored" stays "ignored"). It is read only
// where the learned layer's score is near its Medium threshold (see below),
// by the English rules and by the layer itself; its findings say Via
// "typo", and its rules' findings are Medium at most. On the English corpus
// with a typo in 30% of its words of five letters or more, recall is 84.7%
// (79.9% without the typo view; 87.4% on the text without typos), with no
// more false positives.
//
// Text hidden in an encoding or a spelling is decoded and scanned again;
// its injection findings are one severity higher, cover the whole run and
// name the scheme in Via: base64, base32, hex and percent-encoded runs of
// 16 or more characters; ascii85 (<~ ~> blocks, and bare tokens of 20 or
// more characters); uuencode (a begin line, or full "M" lines); Morse code
// (8 or more dots and dashes); braille (8 or more cells, Grade 1); 4 or
// more NATO alphabet words; ROT13, atbash and reversed clauses, looked at
// only when the common English words of the transform ("gur", "gsv",
// "eht" for "the") clearly outnumber the plain ones, so that English never
// pays for them. Only what decodes to text is scanned, two levels deep and
// 64 KiB per call at most.
//
// Tag characters (outside emoji flag sequences), bidi embedding, override
// and isolate controls, and runs of 4 or more variation selectors or
// invisible operators (U+2061–U+2064) are findings in themselves
// ([HiddenText]); the bytes selectors carry (one per byte, "emoji
// smuggling") and operators carry (as bits) are decoded and scanned too. A
// single variation selector, as in an emoji's presentation, is no finding.
//
// # Injection
//
// Rules are grouped in categories: [InstructionOverride], [RoleHijack],
// [PromptExtraction], [DelimiterInjection], [ToolAbuse],
// [DataExfiltration], [Jailbreak], [EncodedPayload], each rule with its own
// severity, in English and, for the commonest attacks, Spanish, French,
// German, Italian, Portuguese, Dutch, Polish, Turkish, Russian, Chinese,
// Japanese and Korean. One Aho-Corasick automaton pass over each view finds
// the rules' keywords and the literals their expressions require (read off
// each expression's syntax tree); a rule's expression runs only near one of
// its keywords and when every literal set it requires occurs there, and a
// rule whose matches start with known words is tried only where those
// words start. All expressions are compiled once per process. Word
// boundaries are checked with Unicode letters, not RE2's ASCII \b.
//
// Negation is read: a rule that starts at a verb (ignore, disregard,
// forget, override, reveal, act as, and their translations) reports no
// match whose verb is negated by the words just before it, with only
// spaces between: "never ignore", "it is important not to disregard",
// "don't ever forget", "the bot refuses to reveal", "ne pas ignorer". A
// negation that asks or cancels itself is none: "why not ignore", "could
// you not ignore", "never not ignore", "now or never ignore", "stop
// refusing to reveal", "perché non dimenticare"; and "Do not. Ignore ..."
// (punctuation ends the negation). Russian negation is not read. In a
// document ([Guard.CheckDocument]) a negated match is still reported, at
// Medium: data that talks to the model about its instructions is fenced
// even when it negates them, since an attacker who writes the data can
// dress an instruction as a negation. So is a message that negates the
// same attack eight times or more. A bare
// "you are now a ..." is a roleplay opener, Low; with a jailbreak word
// ("unrestricted", "jailbroken", "DAN") it is High.
//
// # Learned layer
//
// Rules recognize phrasings: they catch the known forms and their
// disguises, and a reworded attack passes. Beside them runs a linear
// classifier over hashed character 3- to 5-grams, two- and three-character
// grams of Chinese, Japanese and Korean, and words and word pairs of the
// main view; the grams carry evidence through typos, inflections and other
// languages. It scores windows of 192 and 512 bytes and the whole text,
// so an instruction planted in a long document scores as it would alone,
// and takes the best window. Its finding (Detector "injection/learned")
// is Medium, with a category from the model's family head: it warns,
// keeps the message out of later history and fences a document. It is High
// only past a higher threshold and when a rule also found an injection in
// the text. Each mode has its own thresholds. The weights (1 MB) are
// embedded; internal/cmd/guardtrain trains them, deterministically, from
// the third-party corpus of ../shared/guardcorpus and testdata/corpus.
// Config.RulesOnly turns the layer off.
//
// Neither layer recognizes intent. Measured on sources left out of
// training, the layer catches about a quarter of the attacks the rules
// miss, and wrongly flags several per cent of benign text from a source
// unlike its training data (most of it questions on sensitive topics);
// Config.LearnedShift trades one for the other (README and BENCHMARKS.md
// have the figures). The guard is one layer; the Engine's other gates
// (tool authorization, approvals) do not rely on it.
//
// # Second opinion
//
// Config.Judge plugs in an extra classifier the host supplies, a [Judge],
// asked only where the built-in verdict is uncertain: the learned layer's
// score is within Config.JudgeBand (default 1 logit) of its Medium
// threshold and no rule found a Medium or higher injection. Its
// "injection" adds a Medium finding (Detector "injection/judge") to a text
// scored just below the threshold; its "benign" removes the learned
// layer's finding from a text scored just above it. Rules are never
// overruled, and every other text is judged by the built-in layers alone,
// which stay the default and stay pure Go. Each call is bounded by
// Config.JudgeTimeout (default 2s); an error, a panic or a timeout fails
// open (the built-in verdict stands) unless Config.JudgeFailClosed is set,
// which blocks the text as a [GuardError]. Verdicts are cached in a
// bounded LRU keyed by a SHA-256 of the normalized text, never the text.
// Package guard/modeljudge is a Judge that asks a model through a Parley
// provider; with it, the guard's accuracy in the band is that model's.
//
// # Documents
//
// [Guard.CheckDocument] scans text that reaches the model as data: tool
// results, page context, fetched documents. It looks for injections,
// hidden text and encoded payloads with the learned layer's document
// thresholds, and does not report personal data.
//
// Config.Allowlist lets operators exempt known phrases: when they cover at
// least 80% of the normalized input, the injection rules and the learned
// layer are skipped for it (hidden text, decoded payloads and PII are still
// checked).
//
// # Personal data and credentials
//
// Matches are validated, not just pattern-matched: cards by length, issuer
// range and Luhn; IBANs by the per-country length table and mod 97-10; US
// SSNs by the area, group and serial rules; UK NHS numbers by mod 11;
// Spanish NIF/NIE by their letter; Italian codici fiscali by their check
// character; Polish PESEL by checksum and birth date; Indian Aadhaar by
// Verhoeff; EU VAT numbers by the national check digits where public (BE,
// DE, DK, FI, FR, HR, IT, LU, NL, PL, PT, SK; others by format and a
// context word). Credentials: AWS access key ids, GitHub tokens (with their
// CRC32 where the format defines one), Slack, Stripe live keys, OpenAI,
// Anthropic and Google API keys, PEM private keys, JWTs (whose header must
// decode to JSON with "alg"), and password/secret assignments whose value
// passes an entropy threshold and is not a placeholder. Context words in
// the five words before a match ("card", "IBAN", "SSN", ...) raise
// Confidence, and the weak formats (a bare 9-digit SSN, a PESEL, a phone
// number without +) are reported only with one.
//
// A Finding never holds the matched text, so findings can be logged and
// audited; Result.Redacted is the only place the guard returns text.
//
// # Actions
//
// Each category maps to an action: [DefaultActions] (credentials Block;
// national ids, IBANs and cards Redact; email, JWT and VAT Warn; phone and
// IP addresses Flag), overridden per category by Config.Actions. Injection
// categories, and custom categories, are judged by severity: High and
// Critical Block, Medium Warns, Low Flags. A Result's Action is the
// strongest of its findings'. Redact and Block PII spans are replaced in
// Result.Redacted by [<CATEGORY>_REDACTED], e.g. [CARD_REDACTED].
//
// [Result.Injection] is the highest severity among injection findings: the
// Engine keeps a message whose Injection is High or more out of later
// history, and replays a Medium one fenced, as words that are not
// instructions. [Result.Categories] lists the categories for storage and audit.
//
// # Errors
//
// Check and CheckArgs never return an error: they fail closed. A custom
// [Detector] that returns an error or panics, a panic inside the guard, or
// a ctx that is done gives a Critical [GuardError] finding and Block, with
// the cause in Result.Cause for the log; an input larger than
// Config.MaxBytes is blocked as [TooLarge]; tool arguments that are not
// valid JSON are blocked as [InvalidJSON] (and still scanned as text).
// [Result.Err] returns an error wrapping [ErrBlocked] for a blocked result,
// and [New] returns errors wrapping [ErrInvalidConfig]; test both with
// errors.Is.
//
// # Concurrency
//
// A Guard's configuration is immutable after New, and a Guard is safe for
// concurrent use; its only mutable state is the Judge's verdict cache,
// behind a mutex. Per-call
// buffers are pooled; a clean ASCII message is scanned without allocating.
// Custom detectors and a Judge must be safe for concurrent use.
//
// # Evidence
//
// testdata/corpus holds the project's labelled corpus (injections,
// obfuscated injections generated by TestGenerateObfuscatedCorpus,
// risky-looking benign messages and hard negatives, a multilingual set in
// the twelve languages, PII positives and checksum-failing near misses,
// and held-out rows never trained on); TestCorpusRecallAndFalsePositives
// prints its scorecard. internal/cmd/guardeval measures the guard on the
// third-party corpus per source, family and language, and with -loso
// trains a model without each source and scores that source: the honest
// estimate. BENCHMARKS.md has the figures and the speed numbers.
package guard
