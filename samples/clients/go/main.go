// Command research-client asks the durable ReAct research agent a question from Go with the
// Temporal Go SDK: it starts the `researchAgent` workflow by its type name, watches the run's
// `progress` query while it works (one line on standard error each time it changes), waits
// for the result and prints it as JSON on standard output.
//
// The agent's workflows and worker are TypeScript; a client needs only the type name, the task
// queue and the JSON shapes (src/core/run-input.ts, src/core/message-definitions.ts,
// src/core/run-result.ts). Run it against `npx react-agent server` and `npm run worker`:
//
//	go run . "Which company sold more cars in 2024, BYD or Tesla, and by how much?"
//	go run . -max-calls 20 -id my-run "Which company ...?"
//
// TEMPORAL_ADDRESS (default localhost:7233) and TEMPORAL_NAMESPACE (default "default") say
// where the server is; REACT_AGENT_TASK_QUEUE (default "react-agent") where the workers poll.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// RunInput is the researchAgent workflow's input. Only the question is required; every other
// field (limits, tools, protocol, model, loop, answerSchema) takes the worker's defaults.
type RunInput struct {
	Question string     `json:"question"`
	Limits   *RunLimits `json:"limits,omitempty"`
}

// RunLimits are a run's budgets; a zero field is left out and takes its default.
type RunLimits struct {
	MaxModelCalls      int     `json:"maxModelCalls,omitempty"`
	MaxDurationMinutes float64 `json:"maxDurationMinutes,omitempty"`
}

// Progress is part of what the `progress` query answers.
type Progress struct {
	Phase         string   `json:"phase"`
	ModelCalls    int      `json:"modelCalls"`
	ToolCalls     int      `json:"toolCalls"`
	ContextTokens int      `json:"contextTokens"`
	ElapsedMs     float64  `json:"elapsedMs"`
	LastThought   string   `json:"lastThought"`
	OpenToolCalls []string `json:"openToolCalls"`
	Remaining     struct {
		ModelCalls int `json:"modelCalls"`
	} `json:"remaining"`
}

// Result is the workflow's result: the answer (`prediction`), why the run ended
// (`termination`: answer, max_calls, timeout, token_limit, cancelled, stuck or error) and what
// it cost. The full transcript stays in the agent's store; `transcript` is its reference.
type Result struct {
	Question    string `json:"question"`
	Prediction  string `json:"prediction"`
	Termination string `json:"termination"`
	Iterations  int    `json:"iterations"`
	ToolCalls   int    `json:"toolCalls"`
	Usage       struct {
		PromptTokens     int `json:"promptTokens"`
		CompletionTokens int `json:"completionTokens"`
		TotalTokens      int `json:"totalTokens"`
	} `json:"usage"`
	DurationMs float64 `json:"durationMs"`
	Transcript string  `json:"transcript"`
	Error      string  `json:"error,omitempty"`
}

func main() {
	workflowID := flag.String("id", "", "workflow id (default: go-<unix nanoseconds>)")
	maxCalls := flag.Int("max-calls", 0, "limits.maxModelCalls (default: the workflow's, 100)")
	poll := flag.Duration("poll", time.Second, "how often to query the run's progress")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: research-client [-id ID] [-max-calls N] [-poll 1s] QUESTION")
		flag.PrintDefaults()
	}
	flag.Parse()
	question := strings.Join(flag.Args(), " ")
	if strings.TrimSpace(question) == "" {
		flag.Usage()
		os.Exit(2)
	}
	if *workflowID == "" {
		*workflowID = fmt.Sprintf("go-%d", time.Now().UnixNano())
	}
	if err := run(*workflowID, question, *maxCalls, *poll); err != nil {
		fmt.Fprintln(os.Stderr, "research-client:", err)
		os.Exit(1)
	}
}

func run(workflowID, question string, maxCalls int, poll time.Duration) error {
	c, err := client.Dial(client.Options{
		HostPort:  environment("TEMPORAL_ADDRESS", client.DefaultHostPort),
		Namespace: environment("TEMPORAL_NAMESPACE", client.DefaultNamespace),
	})
	if err != nil {
		return fmt.Errorf("cannot connect to Temporal: %w", err)
	}
	defer c.Close()
	ctx := context.Background()

	input := RunInput{Question: question}
	if maxCalls > 0 {
		input.Limits = &RunLimits{MaxModelCalls: maxCalls}
	}
	// The workflow is started by its type name: no Go workflow function exists or is needed.
	workflowRun, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:            workflowID,
		TaskQueue:     environment("REACT_AGENT_TASK_QUEUE", "react-agent"),
		StaticSummary: question, // the run's summary in the Web UI
	}, "researchAgent", input)
	if err != nil {
		return fmt.Errorf("cannot start the run: %w", err)
	}
	fmt.Fprintf(os.Stderr, "started %s (run %s)\n", workflowRun.GetID(), workflowRun.GetRunID())

	// Wait for the result in the background and watch the progress meanwhile.
	var result Result
	done := make(chan error, 1)
	go func() { done <- workflowRun.Get(ctx, &result) }()
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	last := ""
	for {
		select {
		case err := <-done:
			if err != nil {
				return explain(err)
			}
			encoded, _ := json.MarshalIndent(result, "", "  ")
			fmt.Println(string(encoded))
			return nil
		case <-ticker.C:
			// An empty run id asks the latest run (a long run continues as new).
			value, err := c.QueryWorkflow(ctx, workflowRun.GetID(), "", "progress")
			if err != nil {
				continue // e.g. before the run's first workflow task; the next tick tries again
			}
			var progress Progress
			if value.Get(&progress) != nil {
				continue
			}
			line := fmt.Sprintf("progress: phase=%s modelCalls=%d toolCalls=%d remainingModelCalls=%d open=%v",
				progress.Phase, progress.ModelCalls, progress.ToolCalls, progress.Remaining.ModelCalls, progress.OpenToolCalls)
			if line != last {
				fmt.Fprintln(os.Stderr, line)
				last = line
			}
		}
	}
}

// explain says why the workflow failed: the ApplicationError it threw, with its type (for
// example ReactAgent.Run.InvalidInput when it refused the input).
func explain(err error) error {
	var applicationError *temporal.ApplicationError
	if errors.As(err, &applicationError) {
		return fmt.Errorf("the run failed: %s: %s", applicationError.Type(), applicationError.Message())
	}
	return fmt.Errorf("the run failed: %w", err)
}

func environment(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}
