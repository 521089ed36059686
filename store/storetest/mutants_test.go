package storetest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/internal/mutanttest"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/memstore"
	"github.com/parleyhq/parley/store/storetest"
)

// A suite that passes everything proves nothing. Each mutant below is the
// memory store with one contract broken; the suite must fail it, in the case
// named. The mutants run in a child process because a failing suite fails
// its *testing.T, which cannot be faked.

type mutant struct {
	name     string
	wrap     func(*memstore.Store) store.Store
	wantFail string // subtest path that must fail
}

var mutants = []mutant{
	{"ListsOtherOwners", func(s *memstore.Store) store.Store { return &ownerLeak{Store: s} },
		"ListThreads/OtherOwnersNeverListed"},
	{"ListsArchived", func(s *memstore.Store) store.Store { return archivedLeak{s} },
		"ListThreads/ArchivedOnlyWithIncludeArchived"},
	{"NoDefaultLimit", func(s *memstore.Store) store.Store { return noDefaultLimit{s} },
		"ListThreads/ZeroOrNegativeLimitMeans50"},
	{"BeforeInclusive", func(s *memstore.Store) store.Store { return beforeInclusive{s} },
		"ListThreads/BeforePagesStrictly"},
	{"PlainNotFound", func(s *memstore.Store) store.Store { return plainNotFound{s} },
		"Threads/GetUnknownIsNotFound"},
	{"ClearCancelNoop", func(s *memstore.Store) store.Store { return clearCancelNoop{s} },
		"Threads/RequestAndClearCancelAreVisibleThroughGet"},
	{"NonAtomicAppend", func(s *memstore.Store) store.Store { return nonAtomicAppend{s} },
		"Messages/AppendTurnWithTakenIDConflictsAndWritesNothing"},
	{"AppendIgnoresExpectedSeq", func(s *memstore.Store) store.Store { return ignoreSeq{s} },
		"Messages/AppendTurnAtStaleSeqConflictsAndWritesNothing"},
	{"UpdateDropsModelMessages", func(s *memstore.Store) store.Store { return dropModelMessages{s} },
		"Messages/UpdateMessageReplacesMutableFieldsOnly"},
	{"UpdateMerges", func(s *memstore.Store) store.Store { return updateMerges{s} },
		"Messages/UpdateMessageCanClearBlocksAndModelMessages"},
	{"AliasesReturnedMessages", func(s *memstore.Store) store.Store { return &aliasing{Store: s} },
		"Isolation/MutatingReturnedMessagesChangesNothing"},
	{"IgnoresCanceledContext", func(s *memstore.Store) store.Store { return ignoreCtx{s} },
		"Context/CanceledContextFailsEveryMethodAndWritesNothing"},
	{"MessageIDsNotUUIDs", func(s *memstore.Store) store.Store { return shortIDs{s} },
		"Messages/AppendTurnFillsIDsAndTimes"},
	{"DecidesDecidedProposals", func(s *memstore.Store) store.Store { return redecide{s} },
		"Proposals/DecideTwiceConflictsWithCurrentState"},
	{"DecidesByCheckThenAct", func(s *memstore.Store) store.Store { return checkThenAct{s} },
		"Proposals/ConcurrentDecisionsHaveExactlyOneWinner"},
	{"IgnoresProposalExpiry", func(s *memstore.Store) store.Store { return ignoreExpiry{s} },
		"Proposals/DecideAtOrAfterExpiryMarksExpiredAndConflicts"},
	{"ReopenIgnoresDecidedAt", func(s *memstore.Store) store.Store { return reopenAnyTime{s} },
		"Proposals/ReopenDecidedAtAnotherTimeConflicts"},
	{"KeepsProposalsOfDeletedThreads", func(s *memstore.Store) store.Store { return &keepProposals{Store: s} },
		"Proposals/DeleteThreadRemovesItsProposals"},
	{"DropsNULFromContent", func(s *memstore.Store) store.Store { return dropNUL{s} },
		"Strings/ModelTextRoundTripsExactly"},
	{"DropsEscapedNULFromJSON", func(s *memstore.Store) store.Store { return dropJSONNUL{s} },
		"Strings/ModelJSONRoundTrips"},
	{"RefusesInvalidUTF8", func(s *memstore.Store) store.Store { return refuseInvalidUTF8{s} },
		"Strings/InvalidUTF8IsKeptOrReplacedNeverAnError"},
	{"FeedbackInsertsSecondRow", func(s *memstore.Store) store.Store { return &feedbackRows{Store: s} },
		"Feedback/SetAgainReplacesKeepsCreatedAtAdvancesUpdatedAt"},
	{"FeedbackUpsertByCheckThenAct", func(s *memstore.Store) store.Store { return &feedbackRows{Store: s, race: true} },
		"Feedback/ConcurrentSetsForOnePairLeaveOneRow"},
	{"FeedbackResetsCreatedAt", func(s *memstore.Store) store.Store { return feedbackResetsCreatedAt{s} },
		"Feedback/SetAgainReplacesKeepsCreatedAtAdvancesUpdatedAt"},
	{"FeedbackOnUserMessage", func(s *memstore.Store) store.Store { return feedbackOnUserMessage{s} },
		"Feedback/SetOnUserMessageIsInvalid"},
	{"FeedbackAnyRating", func(s *memstore.Store) store.Store { return feedbackAnyRating{s} },
		"Feedback/SetWithBadRatingIsInvalid"},
	{"FeedbackThreadIDAsGiven", func(s *memstore.Store) store.Store { return feedbackThreadAsGiven{s} },
		"Feedback/SetFillsThreadIDFromTheMessageAndTimesWithNow"},
	{"KeepsFeedbackOfDeletedThreads", func(s *memstore.Store) store.Store { return &keepFeedback{Store: s} },
		"Feedback/DeleteThreadRemovesItsFeedback"},
	{"ListsFeedbackByUpdatedAt", func(s *memstore.Store) store.Store { return feedbackByUpdatedAt{s} },
		"Feedback/ListOldestCreatedFirstAndEmptyForUnknownThread"},
	{"SetSummaryWithoutCompare", func(s *memstore.Store) store.Store { return summaryWithoutCompare{s} },
		"Summaries/SetSummaryWithStalePrevThroughConflictsAndWritesNothing"},
	{"SetSummaryByCheckThenAct", func(s *memstore.Store) store.Store { return summaryCheckThenAct{s} },
		"Concurrency/ConcurrentSetSummariesHaveExactlyOneWinner"},
	{"SetSummaryMovesUpdatedAt", func(s *memstore.Store) store.Store { return summaryTouches{s} },
		"Summaries/SetSummaryLeavesUpdatedAtAndOtherFields"},
	{"DropsNULFromSummary", func(s *memstore.Store) store.Store { return dropSummaryNUL{s} },
		"Strings/ModelTextRoundTripsExactly"},
	{"ReplaceSupersedesOnlyTheReplaced", func(s *memstore.Store) store.Store { return &supersedeOne{Store: s} },
		"Edits/ReplacingSupersedesItAndEveryLaterMessage"},
	{"ReplaceKeepsACoveredSummary", func(s *memstore.Store) store.Store { return keepCoveredSummary{s} },
		"Edits/ReplacingClearsTheSummaryOnlyWhenItCoversTheMessage"},
	{"ReplaceClearsAnUncoveredSummary", func(s *memstore.Store) store.Store { return clearAnySummary{s} },
		"Edits/ReplacingClearsTheSummaryOnlyWhenItCoversTheMessage"},
	{"ReplaceOfSupersededAppendsAnyway", func(s *memstore.Store) store.Store { return replaceSuperseded{s} },
		"Concurrency/ConcurrentReplacementsOfOneMessageHaveExactlyOneWinner"},
	{"SourceDroppedOnWrite", func(s *memstore.Store) store.Store { return dropSource{s} },
		"Sources/AppendTurnRoundTripsEverySource"},
	{"SourceKeptOnTheAssistant", func(s *memstore.Store) store.Store { return &sourceOverlay{Store: s, assistant: true} },
		"Sources/AppendTurnStoresTheAssistantsSourceEmpty"},
	{"SourceUnknownStoredAsTyped", func(s *memstore.Store) store.Store { return anySource{s} },
		"Sources/AppendTurnWithUnknownSourceIsInvalidAndWritesNothing"},
	{"SourceWrittenByUpdateMessage", func(s *memstore.Store) store.Store { return &sourceOverlay{Store: s, update: true} },
		"Sources/UpdateMessageKeepsTheSource"},
	{"ActivateWithoutDeactivating", func(s *memstore.Store) store.Store { return newActiveSet(s, activateAdds) },
		"SystemPrompts/ActivateSwitchesTheOneActivePrompt"},
	{"ActivateByCheckThenAct", func(s *memstore.Store) store.Store { return newActiveSet(s, activateCheckThenAct) },
		"SystemPrompts/ConcurrentActivationsLeaveExactlyOneActiveAtEveryObservation"},
	{"ActivateInTwoSteps", func(s *memstore.Store) store.Store { return activateInTwoSteps{s} },
		"SystemPrompts/ConcurrentActivationsLeaveExactlyOneActiveAtEveryObservation"},
	{"CreateHonoursActive", func(s *memstore.Store) store.Store { return createActive{s} },
		"SystemPrompts/CreateFillsIDAndTimesAndIsInactive"},
	{"ListsPromptsOldestFirst", func(s *memstore.Store) store.Store { return promptsOldestFirst{s} },
		"SystemPrompts/ListNewestCreatedFirstThenByDescendingID"},
	{"PreferenceSetIgnoresTheUser", func(s *memstore.Store) store.Store { return &sharedPreference{Store: s} },
		"Preferences/SetLeavesOtherUsersAlone"},
	{"PreferenceGetFallsBackToAnyUser", func(s *memstore.Store) store.Store { return &anyUsersPreference{Store: s} },
		"Preferences/GetNeverReturnsAnotherUsersChoice"},
	{"PreferenceClearClearsEveryone", func(s *memstore.Store) store.Store { return &clearEveryone{Store: s} },
		"Preferences/ClearLeavesOtherUsersAlone"},
	{"PreferenceInsertByCheckThenAct", func(s *memstore.Store) store.Store { return &insertPreference{Store: s} },
		"Preferences/ConcurrentSetsForOneUserLeaveOneWholeWrite"},
	{"RelayDropsNUL", func(s *memstore.Store) store.Store { return relayDropsNUL{s} },
		"Relay/PayloadsRoundTripEveryByte"},
	{"RelayToEveryTopic", func(s *memstore.Store) store.Store { return &relayEveryTopic{Store: s} },
		"Relay/PublishReachesEverySubscriberOfTheTopicInOrderAndNoOther"},
	{"RelayRepeatsLongPayloads", func(s *memstore.Store) store.Store { return relayRepeats{s} },
		"Relay/PublishReachesEverySubscriberOfTheTopicInOrderAndNoOther"},
	{"RelayKeepsThePublishersBuffer", newRelayShares,
		"Relay/PayloadsRoundTripEveryByte"},
}

const mutantEnv = "STORETEST_MUTANT"

func TestSuiteFailsBrokenStores(t *testing.T) {
	ms := make([]mutanttest.Mutant, len(mutants))
	for i, m := range mutants {
		ms[i] = mutanttest.Mutant{Name: m.name, WantFail: m.wantFail}
	}
	mutanttest.Check(t, mutantEnv, "TestMutantSuite", ms)
}

// TestMutantSuite is the child process of TestSuiteFailsBrokenStores.
func TestMutantSuite(t *testing.T) {
	name := mutanttest.Current(t, mutantEnv)
	i := slices.IndexFunc(mutants, func(m mutant) bool { return m.name == name })
	if i < 0 {
		t.Fatalf("no mutant %q", name)
	}
	storetest.Run(t, func(*testing.T) store.Store { return mutants[i].wrap(memstore.New()) })
}

type ownerLeak struct {
	*memstore.Store
	mu     sync.Mutex
	owners []string
}

func (s *ownerLeak) CreateThread(ctx context.Context, t *store.Thread) error {
	s.mu.Lock()
	s.owners = append(s.owners, t.OwnerID)
	s.mu.Unlock()
	return s.Store.CreateThread(ctx, t)
}

func (s *ownerLeak) ListThreads(ctx context.Context, _ string, opts store.ListOptions) ([]store.Thread, error) {
	s.mu.Lock()
	owners := slices.Compact(slices.Sorted(slices.Values(s.owners)))
	s.mu.Unlock()
	var all []store.Thread
	for _, o := range owners {
		ts, err := s.Store.ListThreads(ctx, o, opts)
		if err != nil {
			return nil, err
		}
		all = append(all, ts...)
	}
	return all, nil
}

type archivedLeak struct{ *memstore.Store }

func (s archivedLeak) ListThreads(ctx context.Context, owner string, opts store.ListOptions) ([]store.Thread, error) {
	opts.IncludeArchived = true
	return s.Store.ListThreads(ctx, owner, opts)
}

type noDefaultLimit struct{ *memstore.Store }

func (s noDefaultLimit) ListThreads(ctx context.Context, owner string, opts store.ListOptions) ([]store.Thread, error) {
	if opts.Limit <= 0 {
		opts.Limit = 1000
	}
	return s.Store.ListThreads(ctx, owner, opts)
}

type beforeInclusive struct{ *memstore.Store }

func (s beforeInclusive) ListThreads(ctx context.Context, owner string, opts store.ListOptions) ([]store.Thread, error) {
	if !opts.Before.IsZero() {
		opts.Before = opts.Before.Add(time.Nanosecond)
	}
	return s.Store.ListThreads(ctx, owner, opts)
}

type plainNotFound struct{ *memstore.Store }

func (s plainNotFound) GetThread(ctx context.Context, id string) (store.Thread, error) {
	t, err := s.Store.GetThread(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		err = errors.New("thread not found")
	}
	return t, err
}

type clearCancelNoop struct{ *memstore.Store }

func (clearCancelNoop) ClearCancel(context.Context, string) error { return nil }

// nonAtomicAppend writes the user message even when the assistant's id is
// taken (with a fresh assistant, since a turn is the only way in).
type nonAtomicAppend struct{ *memstore.Store }

func (s nonAtomicAppend) AppendTurn(ctx context.Context, u, a *store.Message) error {
	err := s.Store.AppendTurn(ctx, u, a)
	if errors.Is(err, store.ErrConflict) && u.ID != a.ID {
		fresh := *a
		fresh.ID = ""
		_ = s.Store.AppendTurn(ctx, u, &fresh)
	}
	return err
}

// ignoreSeq appends after whatever is last, so a turn can be answered
// twice.
type ignoreSeq struct{ *memstore.Store }

func (s ignoreSeq) AppendTurn(ctx context.Context, u, a *store.Message) error {
	u.Seq = 0
	return s.Store.AppendTurn(ctx, u, a)
}

type dropModelMessages struct{ *memstore.Store }

func (s dropModelMessages) UpdateMessage(ctx context.Context, m *store.Message) error {
	c := *m
	c.ModelMessages = nil
	return s.Store.UpdateMessage(ctx, &c)
}

// updateMerges keeps stored Blocks and ModelMessages when the update has none.
type updateMerges struct{ *memstore.Store }

func (s updateMerges) UpdateMessage(ctx context.Context, m *store.Message) error {
	c := *m
	if old, err := s.Store.GetMessage(ctx, m.ID); err == nil {
		if c.Blocks == nil {
			c.Blocks = old.Blocks
		}
		if c.ModelMessages == nil {
			c.ModelMessages = old.ModelMessages
		}
	}
	return s.Store.UpdateMessage(ctx, &c)
}

// aliasing hands every caller the same copy of a message.
type aliasing struct {
	*memstore.Store
	mu    sync.Mutex
	cache map[string]store.Message
}

func (s *aliasing) GetMessage(ctx context.Context, id string) (store.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.cache[id]; ok {
		return m, nil
	}
	m, err := s.Store.GetMessage(ctx, id)
	if err == nil {
		if s.cache == nil {
			s.cache = map[string]store.Message{}
		}
		s.cache[id] = m
	}
	return m, err
}

type ignoreCtx struct{ *memstore.Store }

func (s ignoreCtx) AppendTurn(_ context.Context, u, a *store.Message) error {
	return s.Store.AppendTurn(context.Background(), u, a)
}

type shortIDs struct{ *memstore.Store }

func (s shortIDs) AppendTurn(ctx context.Context, u, a *store.Message) error {
	for _, m := range []*store.Message{u, a} {
		if m.ID == "" {
			m.ID = uuid.NewString()[:8]
		}
	}
	return s.Store.AppendTurn(ctx, u, a)
}

// redecide lets a decided proposal be decided again: the double apply.
type redecide struct{ *memstore.Store }

func (s redecide) DecideProposal(ctx context.Context, token string, status store.ProposalStatus, at time.Time) (store.Proposal, error) {
	p, err := s.Store.DecideProposal(ctx, token, status, at)
	if errors.Is(err, store.ErrConflict) && p.Status != store.ProposalExpired {
		p.Status, p.DecidedAt = status, &at
		return p, nil
	}
	return p, err
}

// checkThenAct reads the status, and decides in a second step: between the
// two another decider may win, and both report success.
type checkThenAct struct{ *memstore.Store }

func (s checkThenAct) DecideProposal(ctx context.Context, token string, status store.ProposalStatus, at time.Time) (store.Proposal, error) {
	p, err := s.Store.GetProposal(ctx, token)
	if err != nil || p.Status != store.ProposalPending {
		return s.Store.DecideProposal(ctx, token, status, at)
	}
	time.Sleep(time.Millisecond) // the window every check-then-act store has
	p, err = s.Store.DecideProposal(ctx, token, status, at)
	if errors.Is(err, store.ErrConflict) && p.Status != store.ProposalExpired {
		p.Status, p.DecidedAt = status, &at // it saw pending, so it "won"
		return p, nil
	}
	return p, err
}

// ignoreExpiry decides a pending proposal however late the decision is.
type ignoreExpiry struct{ *memstore.Store }

func (s ignoreExpiry) DecideProposal(ctx context.Context, token string, status store.ProposalStatus, at time.Time) (store.Proposal, error) {
	if p, err := s.Store.GetProposal(ctx, token); err == nil && !p.ExpiresAt.After(at) {
		p, err := s.Store.DecideProposal(ctx, token, status, p.ExpiresAt.Add(-time.Microsecond))
		p.DecidedAt = &at
		return p, err
	}
	return s.Store.DecideProposal(ctx, token, status, at)
}

// reopenAnyTime reopens whatever decision is stored, so a stale reopen
// undoes someone else's later decision.
type reopenAnyTime struct{ *memstore.Store }

func (s reopenAnyTime) ReopenProposal(ctx context.Context, token string, decidedAt time.Time) error {
	if p, err := s.Store.GetProposal(ctx, token); err == nil && p.DecidedAt != nil {
		decidedAt = *p.DecidedAt
	}
	return s.Store.ReopenProposal(ctx, token, decidedAt)
}

// keepProposals answers GetProposal for the proposals of deleted threads,
// like a SQL store without the cascade.
type keepProposals struct {
	*memstore.Store
	mu    sync.Mutex
	ghost map[string]store.Proposal
}

func (s *keepProposals) DeleteThread(ctx context.Context, id string) error {
	ps, _ := s.Store.ListProposals(ctx, id)
	if err := s.Store.DeleteThread(ctx, id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ghost == nil {
		s.ghost = map[string]store.Proposal{}
	}
	for _, p := range ps {
		s.ghost[p.Token] = p
	}
	return nil
}

func (s *keepProposals) GetProposal(ctx context.Context, token string) (store.Proposal, error) {
	p, err := s.Store.GetProposal(ctx, token)
	if errors.Is(err, store.ErrNotFound) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if g, ok := s.ghost[token]; ok {
			return g, nil
		}
	}
	return p, err
}

// dropNUL loses the U+0000 in a message's content, as a store does that
// cleans what PostgreSQL text refuses.
type dropNUL struct{ *memstore.Store }

func (s dropNUL) GetMessage(ctx context.Context, id string) (store.Message, error) {
	m, err := s.Store.GetMessage(ctx, id)
	m.Content = strings.ReplaceAll(m.Content, "\x00", "")
	return m, err
}

// dropJSONNUL loses the escape \u0000 in model messages, as a store does
// that cleans what PostgreSQL jsonb refuses.
type dropJSONNUL struct{ *memstore.Store }

func (s dropJSONNUL) GetMessage(ctx context.Context, id string) (store.Message, error) {
	m, err := s.Store.GetMessage(ctx, id)
	m.ModelMessages = bytes.ReplaceAll(m.ModelMessages, []byte(`\u0000`), nil)
	return m, err
}

// refuseInvalidUTF8 fails on a title that is not UTF-8, as PostgreSQL text
// does, instead of keeping it or replacing its bad bytes.
type refuseInvalidUTF8 struct{ *memstore.Store }

func (s refuseInvalidUTF8) CreateThread(ctx context.Context, t *store.Thread) error {
	if !utf8.ValidString(t.Title) {
		return fmt.Errorf("title not UTF-8: %w", store.ErrInvalid)
	}
	return s.Store.CreateThread(ctx, t)
}

// feedbackRows is a table without its primary key: every SetFeedback
// inserts a row. With race, it first looks for the row and replaces it if
// found, as a store does that upserts by check-then-act: sequential sets
// look right, concurrent ones insert several rows.
type feedbackRows struct {
	*memstore.Store
	race bool
	mu   sync.Mutex
	rows []store.Feedback
}

func (s *feedbackRows) SetFeedback(ctx context.Context, f *store.Feedback) error {
	found := false
	if s.race {
		s.mu.Lock()
		found = slices.ContainsFunc(s.rows, func(r store.Feedback) bool {
			return r.MessageID == f.MessageID && r.UserID == f.UserID
		})
		s.mu.Unlock()
		time.Sleep(time.Millisecond) // the window every check-then-act store has
	}
	if err := s.Store.SetFeedback(ctx, f); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if found {
		for i, r := range s.rows {
			if r.MessageID == f.MessageID && r.UserID == f.UserID {
				s.rows[i] = *f
			}
		}
		return nil
	}
	s.rows = append(s.rows, *f)
	return nil
}

func (s *feedbackRows) DeleteFeedback(ctx context.Context, messageID, userID string) error {
	if err := s.Store.DeleteFeedback(ctx, messageID, userID); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows = slices.DeleteFunc(s.rows, func(r store.Feedback) bool {
		return r.MessageID == messageID && r.UserID == userID
	})
	return nil
}

func (s *feedbackRows) ListFeedback(ctx context.Context, threadID string) ([]store.Feedback, error) {
	if _, err := s.Store.ListFeedback(ctx, threadID); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []store.Feedback{}
	for _, r := range s.rows {
		if r.ThreadID == threadID {
			out = append(out, r)
		}
	}
	return out, nil
}

// feedbackResetsCreatedAt replaces feedback by deleting and inserting it,
// so a change of mind looks like a first rating.
type feedbackResetsCreatedAt struct{ *memstore.Store }

func (s feedbackResetsCreatedAt) SetFeedback(ctx context.Context, f *store.Feedback) error {
	_ = s.Store.DeleteFeedback(ctx, f.MessageID, f.UserID)
	return s.Store.SetFeedback(ctx, f)
}

// feedbackOnUserMessage rates whatever message it is given: a user's
// message is stored as if it were the assistant's.
type feedbackOnUserMessage struct{ *memstore.Store }

func (s feedbackOnUserMessage) SetFeedback(ctx context.Context, f *store.Feedback) error {
	err := s.Store.SetFeedback(ctx, f)
	if m, gerr := s.Store.GetMessage(ctx, f.MessageID); errors.Is(err, store.ErrInvalid) &&
		gerr == nil && m.Role == store.RoleUser && f.UserID != "" {
		f.ThreadID, f.CreatedAt, f.UpdatedAt = m.ThreadID, time.Now(), time.Now()
		return nil
	}
	return err
}

// feedbackAnyRating takes an unknown rating as a thumbs up.
type feedbackAnyRating struct{ *memstore.Store }

func (s feedbackAnyRating) SetFeedback(ctx context.Context, f *store.Feedback) error {
	if f.Rating != store.RatingDown {
		f.Rating = store.RatingUp
	}
	return s.Store.SetFeedback(ctx, f)
}

// feedbackThreadAsGiven trusts the caller's ThreadID over the message's.
type feedbackThreadAsGiven struct{ *memstore.Store }

func (s feedbackThreadAsGiven) SetFeedback(ctx context.Context, f *store.Feedback) error {
	given := f.ThreadID
	err := s.Store.SetFeedback(ctx, f)
	if err == nil && given != "" {
		f.ThreadID = given
	}
	return err
}

// keepFeedback answers ListFeedback for deleted threads, like a SQL store
// without the cascade.
type keepFeedback struct {
	*memstore.Store
	mu    sync.Mutex
	ghost map[string][]store.Feedback
}

func (s *keepFeedback) DeleteThread(ctx context.Context, id string) error {
	fbs, _ := s.Store.ListFeedback(ctx, id)
	if err := s.Store.DeleteThread(ctx, id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ghost == nil {
		s.ghost = map[string][]store.Feedback{}
	}
	s.ghost[id] = fbs
	return nil
}

func (s *keepFeedback) ListFeedback(ctx context.Context, threadID string) ([]store.Feedback, error) {
	s.mu.Lock()
	g, ok := s.ghost[threadID]
	s.mu.Unlock()
	if ok {
		return g, nil
	}
	return s.Store.ListFeedback(ctx, threadID)
}

// feedbackByUpdatedAt lists the most recently changed feedback last.
type feedbackByUpdatedAt struct{ *memstore.Store }

func (s feedbackByUpdatedAt) ListFeedback(ctx context.Context, threadID string) ([]store.Feedback, error) {
	fbs, err := s.Store.ListFeedback(ctx, threadID)
	slices.SortStableFunc(fbs, func(a, b store.Feedback) int { return a.UpdatedAt.Compare(b.UpdatedAt) })
	return fbs, err
}

// summaryWithoutCompare sets the summary over whatever is stored: of two
// compactions, the later one silently overwrites the other.
type summaryWithoutCompare struct{ *memstore.Store }

func (s summaryWithoutCompare) SetSummary(ctx context.Context, id, summary string, through, _ int) error {
	th, err := s.Store.GetThread(ctx, id)
	if err != nil {
		return s.Store.SetSummary(ctx, id, summary, through, 0)
	}
	return s.Store.SetSummary(ctx, id, summary, through, th.SummaryThrough)
}

// summaryCheckThenAct compares in one step and sets in another: between
// the two another compaction may win, and both report success.
type summaryCheckThenAct struct{ *memstore.Store }

func (s summaryCheckThenAct) SetSummary(ctx context.Context, id, summary string, through, prev int) error {
	th, err := s.Store.GetThread(ctx, id)
	if err != nil || th.SummaryThrough != prev {
		return s.Store.SetSummary(ctx, id, summary, through, prev)
	}
	time.Sleep(time.Millisecond) // the window every check-then-act store has
	cur, err := s.Store.GetThread(ctx, id)
	if err != nil {
		return err
	}
	return s.Store.SetSummary(ctx, id, summary, through, cur.SummaryThrough)
}

// summaryTouches counts a summary as activity and moves UpdatedAt, as a
// store does that reuses its rename statement.
type summaryTouches struct{ *memstore.Store }

func (s summaryTouches) SetSummary(ctx context.Context, id, summary string, through, prev int) error {
	if err := s.Store.SetSummary(ctx, id, summary, through, prev); err != nil {
		return err
	}
	th, err := s.Store.GetThread(ctx, id)
	if err != nil {
		return err
	}
	return s.Store.RenameThread(ctx, id, th.Title) // memstore's rename sets UpdatedAt
}

// dropSummaryNUL loses the U+0000 in a thread's summary, as a store does
// that cleans what PostgreSQL text refuses.
type dropSummaryNUL struct{ *memstore.Store }

func (s dropSummaryNUL) GetThread(ctx context.Context, id string) (store.Thread, error) {
	th, err := s.Store.GetThread(ctx, id)
	th.Summary = strings.ReplaceAll(th.Summary, "\x00", "")
	return th, err
}

// supersedeOne marks only the replaced message superseded: the old
// answer to it, and the turns after it, stay on the branch. It hides the
// SupersededAt the memory store gave the later messages.
type supersedeOne struct {
	*memstore.Store
	mu      sync.Mutex
	current map[string]bool // message ids to report as not superseded
}

func (s *supersedeOne) AppendTurn(ctx context.Context, u, a *store.Message) error {
	var before []store.Message
	if u != nil && u.Replaces != "" {
		before, _ = s.Store.ListMessages(ctx, u.ThreadID)
	}
	if err := s.Store.AppendTurn(ctx, u, a); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range before {
		if m.ID != u.Replaces && m.SupersededAt == nil {
			if s.current == nil {
				s.current = map[string]bool{}
			}
			s.current[m.ID] = true
		}
	}
	return nil
}

func (s *supersedeOne) hide(m store.Message) store.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current[m.ID] {
		m.SupersededAt = nil
	}
	return m
}

func (s *supersedeOne) GetMessage(ctx context.Context, id string) (store.Message, error) {
	m, err := s.Store.GetMessage(ctx, id)
	return s.hide(m), err
}

func (s *supersedeOne) ListMessages(ctx context.Context, threadID string) ([]store.Message, error) {
	ms, err := s.Store.ListMessages(ctx, threadID)
	for i := range ms {
		ms[i] = s.hide(ms[i])
	}
	return ms, err
}

// keepCoveredSummary puts back a summary an edit cleared: the thread's
// context then summarizes a branch that is gone.
type keepCoveredSummary struct{ *memstore.Store }

func (s keepCoveredSummary) AppendTurn(ctx context.Context, u, a *store.Message) error {
	th, terr := s.Store.GetThread(ctx, u.ThreadID)
	if err := s.Store.AppendTurn(ctx, u, a); err != nil {
		return err
	}
	if after, err := s.Store.GetThread(ctx, u.ThreadID); terr == nil && err == nil &&
		th.SummaryThrough > 0 && after.SummaryThrough == 0 {
		return s.Store.SetSummary(ctx, th.ID, th.Summary, th.SummaryThrough, 0)
	}
	return nil
}

// clearAnySummary clears the summary on every edit, covered or not: the
// next turn pays to summarize again what had not changed.
type clearAnySummary struct{ *memstore.Store }

func (s clearAnySummary) AppendTurn(ctx context.Context, u, a *store.Message) error {
	if err := s.Store.AppendTurn(ctx, u, a); err != nil {
		return err
	}
	if th, err := s.Store.GetThread(ctx, u.ThreadID); err == nil && u.Replaces != "" && th.SummaryThrough > 0 {
		return s.Store.SetSummary(ctx, th.ID, "", 0, th.SummaryThrough)
	}
	return nil
}

// replaceSuperseded appends an edit whose replaced message another edit
// already superseded, as a plain turn: two concurrent edits both land.
type replaceSuperseded struct{ *memstore.Store }

func (s replaceSuperseded) AppendTurn(ctx context.Context, u, a *store.Message) error {
	err := s.Store.AppendTurn(ctx, u, a)
	if errors.Is(err, store.ErrConflict) && u.Replaces != "" && u.Seq == 0 {
		replaces := u.Replaces
		u.Replaces = ""
		err = s.Store.AppendTurn(ctx, u, a)
		u.Replaces = replaces
	}
	return err
}

// dropSource writes every user message as typed but leaves the caller's
// Source as given, as a store does that forgot the column in its INSERT.
type dropSource struct{ *memstore.Store }

func (s dropSource) AppendTurn(ctx context.Context, u, a *store.Message) error {
	if u == nil || !u.Source.Valid() {
		return s.Store.AppendTurn(ctx, u, a)
	}
	src := u.Source
	u.Source = store.SourceTyped
	err := s.Store.AppendTurn(ctx, u, a)
	u.Source = src
	return err
}

// anySource takes a source it does not know as typed instead of refusing it.
type anySource struct{ *memstore.Store }

func (s anySource) AppendTurn(ctx context.Context, u, a *store.Message) error {
	if u != nil && !u.Source.Valid() {
		u.Source = store.SourceTyped
	}
	return s.Store.AppendTurn(ctx, u, a)
}

// sourceOverlay keeps sources the memory store would not, over the ones it
// stored: with assistant, the Source the caller gave an assistant message,
// as a store does that writes both messages alike; with update, the Source
// of every UpdateMessage, as a store does whose UPDATE sets every column.
type sourceOverlay struct {
	*memstore.Store
	assistant, update bool
	mu                sync.Mutex
	sources           map[string]store.MessageSource // by message id
}

func (s *sourceOverlay) set(id string, src store.MessageSource) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sources == nil {
		s.sources = map[string]store.MessageSource{}
	}
	s.sources[id] = src
}

func (s *sourceOverlay) apply(m store.Message) store.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	if src, ok := s.sources[m.ID]; ok {
		m.Source = src
	}
	return m
}

func (s *sourceOverlay) AppendTurn(ctx context.Context, u, a *store.Message) error {
	var src store.MessageSource
	if a != nil {
		src = a.Source
	}
	if err := s.Store.AppendTurn(ctx, u, a); err != nil {
		return err
	}
	if s.assistant {
		a.Source = src
		s.set(a.ID, src)
	}
	return nil
}

func (s *sourceOverlay) UpdateMessage(ctx context.Context, m *store.Message) error {
	if err := s.Store.UpdateMessage(ctx, m); err != nil {
		return err
	}
	if s.update {
		s.set(m.ID, m.Source)
	}
	return nil
}

func (s *sourceOverlay) GetMessage(ctx context.Context, id string) (store.Message, error) {
	m, err := s.Store.GetMessage(ctx, id)
	return s.apply(m), err
}

func (s *sourceOverlay) ListMessages(ctx context.Context, threadID string) ([]store.Message, error) {
	ms, err := s.Store.ListMessages(ctx, threadID)
	for i := range ms {
		ms[i] = s.apply(ms[i])
	}
	return ms, err
}

// activeSet keeps which prompts are active itself, beside the memory
// store's prompts, and activates with activate.
type activeSet struct {
	*memstore.Store
	activate func(s *activeSet, id string)
	mu       sync.Mutex
	active   map[string]bool
	updated  map[string]time.Time // by activation changes
}

func newActiveSet(s *memstore.Store, activate func(*activeSet, string)) *activeSet {
	return &activeSet{Store: s, activate: activate, active: map[string]bool{}, updated: map[string]time.Time{}}
}

// set marks id active or not, and when that is a change, updated now.
// The caller holds s.mu.
func (s *activeSet) set(id string, active bool) {
	if s.active[id] != active {
		s.active[id] = active
		s.updated[id] = time.Now()
	}
}

// activateAdds marks the prompt active and leaves the others as they are.
func activateAdds(s *activeSet, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.set(id, true)
}

// activateCheckThenAct reads which prompts are active, and in a second
// step deactivates those and activates id: two activations that read the
// same active prompt both leave theirs active.
func activateCheckThenAct(s *activeSet, id string) {
	s.mu.Lock()
	var seen []string
	for old, on := range s.active {
		if on && old != id {
			seen = append(seen, old)
		}
	}
	s.mu.Unlock()
	time.Sleep(time.Millisecond) // the window every check-then-act store has
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, old := range seen {
		s.set(old, false)
	}
	s.set(id, true)
}

func (s *activeSet) mark(p store.SystemPrompt) store.SystemPrompt {
	s.mu.Lock()
	defer s.mu.Unlock()
	p.Active = s.active[p.ID]
	if at, ok := s.updated[p.ID]; ok {
		p.UpdatedAt = at
	}
	return p
}

func (s *activeSet) ActivateSystemPrompt(ctx context.Context, id string) error {
	if _, err := s.Store.GetSystemPrompt(ctx, id); err != nil {
		return err
	}
	s.activate(s, id)
	return nil
}

func (s *activeSet) DeactivateSystemPrompts(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.active {
		s.set(id, false)
	}
	return nil
}

func (s *activeSet) DeleteSystemPrompt(ctx context.Context, id string) error {
	if err := s.Store.DeleteSystemPrompt(ctx, id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.active, id)
	delete(s.updated, id)
	return nil
}

func (s *activeSet) GetSystemPrompt(ctx context.Context, id string) (store.SystemPrompt, error) {
	p, err := s.Store.GetSystemPrompt(ctx, id)
	return s.mark(p), err
}

func (s *activeSet) ListSystemPrompts(ctx context.Context) ([]store.SystemPrompt, error) {
	ps, err := s.Store.ListSystemPrompts(ctx)
	for i := range ps {
		ps[i] = s.mark(ps[i])
	}
	return ps, err
}

// ActiveSystemPrompt returns one of the active prompts, as a query with
// LIMIT 1 would.
func (s *activeSet) ActiveSystemPrompt(ctx context.Context) (store.SystemPrompt, error) {
	ps, err := s.ListSystemPrompts(ctx)
	if err != nil {
		return store.SystemPrompt{}, err
	}
	for _, p := range ps {
		if p.Active {
			return p, nil
		}
	}
	return store.SystemPrompt{}, fmt.Errorf("none active: %w", store.ErrNotFound)
}

// activateInTwoSteps deactivates in one transaction and activates in
// another: never two active, but a reader between the steps sees none.
type activateInTwoSteps struct{ *memstore.Store }

func (s activateInTwoSteps) ActivateSystemPrompt(ctx context.Context, id string) error {
	if p, err := s.Store.GetSystemPrompt(ctx, id); err != nil || p.Active {
		return err
	}
	if err := s.Store.DeactivateSystemPrompts(ctx); err != nil {
		return err
	}
	time.Sleep(time.Millisecond) // the window between the two transactions
	return s.Store.ActivateSystemPrompt(ctx, id)
}

// createActive creates a prompt marked active as the active one.
type createActive struct{ *memstore.Store }

func (s createActive) CreateSystemPrompt(ctx context.Context, p *store.SystemPrompt) error {
	active := p.Active
	if err := s.Store.CreateSystemPrompt(ctx, p); err != nil {
		return err
	}
	if active {
		if err := s.Store.ActivateSystemPrompt(ctx, p.ID); err != nil {
			return err
		}
		p.Active = true
	}
	return nil
}

// promptsOldestFirst lists prompts in creation order.
type promptsOldestFirst struct{ *memstore.Store }

func (s promptsOldestFirst) ListSystemPrompts(ctx context.Context) ([]store.SystemPrompt, error) {
	ps, err := s.Store.ListSystemPrompts(ctx)
	slices.Reverse(ps)
	return ps, err
}

// sharedPreference keys the choice by nothing: one row for everyone, as an
// upsert whose WHERE or conflict target forgot user_id. Each read reports
// the reader as its user.
type sharedPreference struct {
	*memstore.Store
	mu  sync.Mutex
	row *store.ModelPreference
}

func (s *sharedPreference) SetModelPreference(ctx context.Context, p store.ModelPreference) error {
	if err := s.Store.SetModelPreference(ctx, p); err != nil {
		return err
	}
	stored, err := s.Store.ModelPreference(ctx, p.UserID)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.row = &stored
	return nil
}

func (s *sharedPreference) ModelPreference(ctx context.Context, userID string) (store.ModelPreference, error) {
	if _, err := s.Store.ModelPreference(ctx, userID); err != nil {
		return store.ModelPreference{}, err // a user who never chose still has none
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := *s.row
	p.UserID = userID
	return p, nil
}

// anyUsersPreference answers a user without a choice with some other
// user's, as a query that lost its WHERE behind a LIMIT 1 would.
type anyUsersPreference struct {
	*memstore.Store
	mu    sync.Mutex
	users []string
}

func (s *anyUsersPreference) SetModelPreference(ctx context.Context, p store.ModelPreference) error {
	if err := s.Store.SetModelPreference(ctx, p); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users = append(s.users, p.UserID)
	return nil
}

func (s *anyUsersPreference) ModelPreference(ctx context.Context, userID string) (store.ModelPreference, error) {
	p, err := s.Store.ModelPreference(ctx, userID)
	if !errors.Is(err, store.ErrNotFound) {
		return p, err
	}
	s.mu.Lock()
	users := slices.Clone(s.users)
	s.mu.Unlock()
	for _, u := range users {
		if other, oerr := s.Store.ModelPreference(ctx, u); oerr == nil {
			return other, nil
		}
	}
	return p, err
}

// clearEveryone clears every user's choice, as a DELETE without its WHERE.
type clearEveryone struct {
	*memstore.Store
	mu    sync.Mutex
	users []string
}

func (s *clearEveryone) SetModelPreference(ctx context.Context, p store.ModelPreference) error {
	if err := s.Store.SetModelPreference(ctx, p); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users = append(s.users, p.UserID)
	return nil
}

func (s *clearEveryone) ClearModelPreference(ctx context.Context, userID string) error {
	if err := s.Store.ClearModelPreference(ctx, userID); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.users {
		_ = s.Store.ClearModelPreference(ctx, u)
	}
	s.users = nil
	return nil
}

// insertPreference upserts by check-then-act: it looks for the user's row
// and then updates it or inserts one, and an insert of a row that another
// writer inserted meanwhile is a unique violation. Sequential sets look
// right; concurrent first choices fail.
type insertPreference struct {
	*memstore.Store
	mu sync.Mutex
}

func (s *insertPreference) SetModelPreference(ctx context.Context, p store.ModelPreference) error {
	_, err := s.Store.ModelPreference(ctx, p.UserID)
	found := err == nil
	time.Sleep(time.Millisecond) // the window every check-then-act store has
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.Store.ModelPreference(ctx, p.UserID); err == nil && !found {
		return fmt.Errorf("insert model preference of %q: %w", p.UserID, store.ErrConflict)
	}
	return s.Store.SetModelPreference(ctx, p)
}

// relayDropsNUL relays payloads without their NUL bytes, as a NOTIFY of
// the raw bytes would.
type relayDropsNUL struct{ *memstore.Store }

func (s relayDropsNUL) Publish(ctx context.Context, topic string, p []byte) error {
	return s.Store.Publish(ctx, topic, bytes.ReplaceAll(p, []byte{0}, nil))
}

// relayEveryTopic delivers each payload to the subscribers of every topic,
// as a relay that forgot to filter its one channel by topic would.
type relayEveryTopic struct {
	*memstore.Store
	mu     sync.Mutex
	topics map[string]bool
}

func (s *relayEveryTopic) Subscribe(ctx context.Context, topic string) (<-chan []byte, error) {
	s.mu.Lock()
	if s.topics == nil {
		s.topics = map[string]bool{}
	}
	s.topics[topic] = true
	s.mu.Unlock()
	return s.Store.Subscribe(ctx, topic)
}

func (s *relayEveryTopic) Publish(ctx context.Context, _ string, p []byte) error {
	s.mu.Lock()
	topics := slices.Sorted(maps.Keys(s.topics))
	s.mu.Unlock()
	for _, t := range topics {
		if err := s.Store.Publish(ctx, t, p); err != nil {
			return err
		}
	}
	return nil
}

// relayRepeats delivers every payload over 1 KiB twice, as a relay that
// retries a send it wrongly took for failed would.
type relayRepeats struct{ *memstore.Store }

func (s relayRepeats) Publish(ctx context.Context, topic string, p []byte) error {
	if err := s.Store.Publish(ctx, topic, p); err != nil || len(p) <= 1024 {
		return err
	}
	return s.Store.Publish(ctx, topic, p)
}

// relayShares hands every subscriber the publisher's own buffer, as a
// relay that forgot to copy would.
type relayShares struct {
	*memstore.Store
	mu   *sync.Mutex
	subs map[string][]chan []byte
}

func newRelayShares(s *memstore.Store) store.Store {
	return relayShares{Store: s, mu: &sync.Mutex{}, subs: map[string][]chan []byte{}}
}

func (s relayShares) Subscribe(ctx context.Context, topic string) (<-chan []byte, error) {
	if _, err := s.Store.Subscribe(ctx, topic); err != nil {
		return nil, err // the same checks
	}
	ch := make(chan []byte, store.RelayBuffer)
	s.mu.Lock()
	s.subs[topic] = append(s.subs[topic], ch)
	s.mu.Unlock()
	return ch, nil
}

func (s relayShares) Publish(ctx context.Context, topic string, p []byte) error {
	if err := s.Store.Publish(ctx, topic, p); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.subs[topic] {
		ch <- p
	}
	return nil
}
