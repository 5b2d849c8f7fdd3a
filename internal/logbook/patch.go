package logbook

// SessionFields are the descriptive fields a caller may set when starting a
// session or on any heartbeat. A nil field is left as it is; a set one is
// clipped to its limit and stored.
type SessionFields struct {
	Title      *string `json:"title"`
	Goal       *string `json:"goal"`
	Task       *string `json:"task"`
	Prompt     *string `json:"prompt"`
	Model      *string `json:"model"`
	AgentType  *string `json:"agent_type"`
	Agent      *string `json:"agent"`
	Issue      *string `json:"issue"`
	Pull       *string `json:"pull"`
	Branch     *string `json:"branch"`
	HeadCommit *string `json:"head_commit"`
	Subject    *string `json:"subject"`
}

// Validate checks the fields that are names (see Name): the agent.
func (f SessionFields) Validate() error {
	if f.Agent != nil {
		if _, err := Name("agent", *f.Agent, MaxID); err != nil {
			return err
		}
	}
	return nil
}

// Apply writes the set fields onto s, clipped to their limits, and derives
// the title again.
func (f SessionFields) Apply(s *Session) {
	set := func(dst *string, src *string, max int) {
		if src != nil {
			*dst = Clip(*src, max)
		}
	}
	set(&s.GivenTitle, f.Title, MaxTitle)
	set(&s.Goal, f.Goal, MaxLongText)
	set(&s.Task, f.Task, MaxLongText)
	set(&s.Prompt, f.Prompt, MaxLongText)
	set(&s.Model, f.Model, MaxModel)
	set(&s.AgentType, f.AgentType, MaxModel)
	set(&s.Agent, f.Agent, MaxID)
	setRef(&s.Issue, f.Issue)
	setRef(&s.Pull, f.Pull)
	set(&s.Branch, f.Branch, MaxBranch)
	set(&s.HeadCommit, f.HeadCommit, MaxCommit)
	set(&s.Subject, f.Subject, MaxID)
	s.DeriveTitle()
}

// setRef sets an issue or pull ref when src is set, clipped to MaxID.
func setRef(dst *Ref, src *string) {
	if src != nil {
		*dst = Ref(Clip(*src, MaxID))
	}
}

// NonEmpty returns f without the fields set to blank text, for a repeated
// start: a hook that fires again with fewer fields must not erase what an
// earlier one said.
func (f SessionFields) NonEmpty() SessionFields {
	keep := func(p *string) *string {
		if p == nil || Clip(*p, 1) == "" {
			return nil
		}
		return p
	}
	return SessionFields{
		Title: keep(f.Title), Goal: keep(f.Goal), Task: keep(f.Task), Prompt: keep(f.Prompt),
		Model: keep(f.Model), AgentType: keep(f.AgentType), Agent: keep(f.Agent), Issue: keep(f.Issue),
		Pull: keep(f.Pull), Branch: keep(f.Branch), HeadCommit: keep(f.HeadCommit), Subject: keep(f.Subject),
	}
}
