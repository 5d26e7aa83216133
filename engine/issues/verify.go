package issues

import "context"

// Verify checks issue id's whole log, every line's hash, link, version
// and state, and its issue.yaml against the last line. It reads issue.yaml
// before the log, so a write made meanwhile reads as interrupted, never
// as a mismatch. It takes no lock and changes nothing. An issue whose
// directory is gone is reported missing (MissingError); an id not given
// yet is not found.
func (s *Store) Verify(id int) (*Report, error) {
	if gone, err := s.gone(id); err != nil {
		return nil, err
	} else if gone {
		return s.verifyMissing(id)
	}
	snap, err := s.b.Read(context.Background(), id)
	var iss *Issue
	var problems []string
	switch {
	case err != nil:
		return nil, err
	case snap.State == nil:
		problems = append(problems, "issue.yaml is missing")
	default:
		if iss, err = s.decode(id, snap.State); err != nil {
			problems = append(problems, "issue.yaml cannot be read: "+err.Error())
		}
	}
	return s.events(id).Check(iss, problems), nil
}
