package swe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// RerunReport is the before/after comparison of a rerun, written into the
// run directory as rerun-TIME.json and rerun-TIME.md.
type RerunReport struct {
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	// Instances is the run's size; Evaluated how many this rerun
	// re-evaluated.
	Instances int `json:"instances"`
	Evaluated int `json:"evaluated"`
	// Counts has a row per status present before or after.
	Counts []RerunCount `json:"counts"`
	// Changed lists the instances whose status changed, by id.
	Changed []RerunChange `json:"changed"`
}

// RerunCount is one status's number of instances before and after.
type RerunCount struct {
	Status string `json:"status"`
	Before int    `json:"before"`
	After  int    `json:"after"`
}

// RerunChange is one instance whose status the rerun changed.
type RerunChange struct {
	InstanceID string `json:"instance_id"`
	Before     string `json:"before"`
	After      string `json:"after"`
}

// newRerunReport compares the selected rows (before) with the run's rows
// after the rerun.
func newRerunReport(typ string, now time.Time, s *Summary, sel, after []Row) *RerunReport {
	rep := &RerunReport{Type: typ, Time: now.UTC(), Instances: s.Instances, Evaluated: s.Evaluated, Changed: []RerunChange{}}
	for _, st := range Statuses {
		if s.Before[st] > 0 || s.Counts[st] > 0 {
			rep.Counts = append(rep.Counts, RerunCount{st, s.Before[st], s.Counts[st]})
		}
	}
	now2 := map[string]string{}
	for _, r := range after {
		now2[r.Key] = r.FinalStatus()
	}
	for _, r := range sel { // sorted by instance id
		if b, a := r.FinalStatus(), now2[r.Key]; a != b {
			rep.Changed = append(rep.Changed, RerunChange{r.InstanceID, b, a})
		}
	}
	return rep
}

// write saves the report as dir/rerun-TIME.json and .md, TIME in UTC to the
// second, with -2, -3, ... when a rerun of the same second wrote one. It
// returns the JSON file's path.
func (rep *RerunReport) write(dir string) (string, error) {
	base := filepath.Join(dir, "rerun-"+rep.Time.Format("20060102T150405Z"))
	name := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(name + ".json"); os.IsNotExist(err) {
			break
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
	if err := writeJSON(name+".json", rep); err != nil {
		return "", err
	}
	if err := writeAtomic(name+".md", []byte(rep.markdown()), true); err != nil {
		return "", err
	}
	return name + ".json", nil
}

func (rep *RerunReport) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Rerun of %s failures, %s\n\n", rep.Type, rep.Time.Format(time.RFC3339))
	fmt.Fprintf(&b, "%d of %d instances re-evaluated; %d changed status.\n\n", rep.Evaluated, rep.Instances, len(rep.Changed))
	b.WriteString("| status | before | after |\n| --- | ---: | ---: |\n")
	for _, c := range rep.Counts {
		fmt.Fprintf(&b, "| %s | %d | %d |\n", c.Status, c.Before, c.After)
	}
	if len(rep.Changed) > 0 {
		b.WriteString("\n| instance | before | after |\n| --- | --- | --- |\n")
		for _, c := range rep.Changed {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", c.InstanceID, c.Before, c.After)
		}
	}
	return b.String()
}
