package dashboard

import "testing"

// TestStreamSlots: a stream needs a slot in all, in its session and in its
// project; one project's sessions cannot take the server's every slot.
func TestStreamSlots(t *testing.T) {
	t.Parallel()
	s := newStreamSlots(10, 2, 3)
	var releases []func()
	take := func(session, project int64) bool {
		r, ok := s.acquire(session, project)
		if ok {
			releases = append(releases, r)
		}
		return ok
	}
	first, second := take(1, 100), take(1, 100)
	if !first || !second {
		t.Fatal("a session's first two streams refused")
	}
	if take(1, 100) {
		t.Fatal("a session's third stream allowed")
	}
	if !take(2, 100) {
		t.Fatal("another session of the project refused")
	}
	if take(3, 100) {
		t.Fatal("a project's fourth stream allowed (a new session each time)")
	}
	if !take(4, 200) {
		t.Fatal("another project refused while the first is at its bound")
	}
	releases[0]()
	releases[0]() // twice: released once
	if !take(3, 100) || take(5, 100) {
		t.Fatal("a released slot was not freed exactly once")
	}
	for range 20 {
		take(int64(len(releases))+10, int64(len(releases))+1000)
	}
	if s.open != 10 {
		t.Fatalf("%d streams open, bound 10", s.open)
	}
}
