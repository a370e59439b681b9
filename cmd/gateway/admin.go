package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"stormsim/gateway/store"
)

// maxCount bounds --count and --members.
const maxCount = 1_000_000

// adminFlags are the one-shot commands' settings.
type adminFlags struct {
	db      dbFlags
	count   int
	members int
	convs   []string
	conv    string
	body    string
	device  string
}

// runAdmin runs migrate, devices, events and reset-floor.
func runAdmin(cmd *command, args []string, stdout, stderr io.Writer) error {
	var af adminFlags
	fs := pflag.NewFlagSet(cmd.name, pflag.ContinueOnError)
	af.db.register(fs)
	switch cmd.name {
	case "devices":
		fs.IntVar(&af.count, "count", 0, "number of devices u-000-d1 .. to provision")
		fs.StringSliceVar(&af.convs, "conv", nil, "conversations the devices join (repeat or comma-separate)")
	case "events":
		fs.StringVar(&af.conv, "conv", "", "conversation id")
		fs.IntVar(&af.count, "count", 0, "number of events to append")
		fs.StringVar(&af.body, "body", "event", "event body prefix; -1, -2, ... is appended")
		fs.IntVar(&af.members, "members", 0, "devices u-000-d1 .. that join the conversation (0 = none)")
	case "reset-floor":
		fs.StringVar(&af.device, "device", "", "device whose floor is reset")
	}
	if err := parse(fs, args, stdout); err != nil {
		return err
	}
	if err := af.validate(cmd.name); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := af.db.open(ctx, "gateway-"+cmd.name, 2)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := migrate(ctx, s, af.db.schema, time.Minute); err != nil {
		return err
	}
	switch cmd.name {
	case "devices":
		return provision(ctx, s, af, stdout)
	case "events":
		return appendEvents(ctx, s, af, stdout)
	case "reset-floor":
		found, err := s.ResetFloor(ctx, af.device)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "reset-floor: %s %s\n", af.device, map[bool]string{true: "reset", false: "had no floor"}[found])
	}
	return nil
}

func (af *adminFlags) validate(cmd string) error {
	if (cmd == "devices" || cmd == "events") && (af.count < 1 || af.count > maxCount) {
		return usageError{fmt.Sprintf("--count: must be in [1, %d] (got %d)", maxCount, af.count)}
	}
	if af.members < 0 || af.members > maxCount {
		return usageError{fmt.Sprintf("--members: must be in [0, %d] (got %d)", maxCount, af.members)}
	}
	if cmd == "events" && af.conv == "" {
		return usageError{"--conv: must not be empty"}
	}
	for _, c := range af.convs {
		if c == "" {
			return usageError{"--conv: must not be empty"}
		}
	}
	if cmd == "reset-floor" && af.device == "" {
		return usageError{"--device: must not be empty"}
	}
	return af.db.validate()
}

func provision(ctx context.Context, s *store.PG, af adminFlags, stdout io.Writer) error {
	n, err := s.ProvisionDevices(ctx, af.count)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "devices: %d provisioned, %d new\n", af.count, n)
	for _, conv := range af.convs {
		joined, err := s.Join(ctx, conv, deviceIDs(af.count))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "devices: %d joined %s\n", joined, conv)
	}
	return nil
}

func appendEvents(ctx context.Context, s *store.PG, af adminFlags, stdout io.Writer) error {
	bodies := make([]string, af.count)
	for i := range bodies {
		bodies[i] = af.body + "-" + strconv.Itoa(i+1)
	}
	head, err := s.AppendEvents(ctx, af.conv, bodies)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "events: conv %s head %d\n", af.conv, head)
	if af.members > 0 {
		joined, err := s.Join(ctx, af.conv, deviceIDs(af.members))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "events: %d devices joined %s\n", joined, af.conv)
	}
	return nil
}

// deviceIDs are store.DeviceID(0) .. store.DeviceID(n-1).
func deviceIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = store.DeviceID(i)
	}
	return ids
}
