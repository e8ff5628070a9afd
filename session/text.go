package session

func conflictWhere(cf *Conflict) string { return ConflictWhere(cf.Kind, cf.File, cf.Lines) }

// ConflictWhere names a conflict for people: its kind, then file:lines when it has a file
// ("hunk main.go:40-58", "vote").
func ConflictWhere(kind, file string, lines LineRange) string {
	where := kind
	if file != "" {
		where += " " + Sanitize(file)
		if !lines.IsZero() {
			where += ":" + lines.String()
		}
	}
	return where
}

// Link is provider/model, or the provider alone when the model is its configured one.
func Link(provider, model string) string {
	if model == "" {
		return provider
	}
	return provider + "/" + model
}
