package benchcli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/patchbench/patchbench/bench/diffxyz"
	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/patch"
)

type diffxyzPromptsOptions struct {
	write, promptDir, dataset, id, task, format, prompt string
}

func newDiffxyzPromptsCommand(sio cli.Stdio) *cobra.Command {
	var o diffxyzPromptsOptions
	cmd := &cobra.Command{
		Use:   "prompts (--write DIR | --dataset PATH [--id ID] [flags])",
		Short: "Write the prompt templates out for editing, or show the prompt of a case",
		Long: `With --write DIR, write the embedded prompt templates into DIR; edit them
and pass --prompts DIR to diffxyz run. A file system-NAME.tmpl adds the prompt
variant NAME.

With --dataset, print the system prompt and the user message of one case
(the first row, or --id) as diffxyz run would send them.

Exit status: 0 success; 2 usage or input error.`,
		Args: ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiffxyzPrompts(o, sio)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.write, "write", "", "write the embedded templates into `DIR`")
	f.StringVar(&o.promptDir, "prompts", "", "`DIR` of templates overriding the embedded ones")
	f.StringVar(&o.dataset, "dataset", "", "dataset `PATH`")
	f.StringVar(&o.id, "id", "", "row id (default: the first row)")
	f.StringVar(&o.task, "task", string(diffxyz.Apply), "task")
	f.StringVar(&o.format, "format", string(patch.UDiff), "format")
	f.StringVar(&o.prompt, "prompt", diffxyz.WithFormat, "prompt variant")
	return cmd
}

func runDiffxyzPrompts(o diffxyzPromptsOptions, sio cli.Stdio) error {
	if o.write != "" {
		files, err := diffxyz.WritePromptFiles(o.write)
		if err != nil {
			return cli.Usage(err)
		}
		for _, f := range files {
			fmt.Fprintln(sio.Out, f)
		}
		return nil
	}
	if o.dataset == "" {
		return cli.Usage(errors.New("diffxyz prompts: give --write DIR or --dataset PATH"))
	}
	prompts, err := diffxyz.LoadPrompts(o.promptDir)
	if err != nil {
		return cli.Usage(err)
	}
	tasks, err := diffxyz.ParseTasks(o.task)
	if err != nil || len(tasks) != 1 {
		return cli.Usage(fmt.Errorf("--task: want one task: %v", err))
	}
	f, err := patch.ParseFormat(o.format)
	if err != nil {
		return cli.Usage(fmt.Errorf("--format: %w", err))
	}
	rows, err := diffxyz.Load(o.dataset)
	if err != nil {
		return cli.Usage(err)
	}
	if err := diffxyz.Prepare(rows); err != nil {
		return cli.Usage(err)
	}
	var row *diffxyz.Row
	for _, r := range rows {
		if o.id == "" || r.ID == o.id {
			row = r
			break
		}
	}
	if row == nil {
		return cli.Usage(fmt.Errorf("--id: no row %q in %s", o.id, o.dataset))
	}
	system, user, err := prompts.Render(diffxyz.Case{Row: row, Task: tasks[0], Format: f, Prompt: o.prompt})
	if err != nil {
		return cli.Usage(err)
	}
	_, err = fmt.Fprintf(sio.Out, "=== system\n%s\n=== user\n%s\n", system, user)
	return err
}
