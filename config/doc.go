// Package config is stormsim's only YAML code: it reads a scenario or a
// sweep file into plain Go values (sim.Scenario, SweepFile), strictly (an
// unknown or duplicate key, a wrong type or a bad value is an *Error
// naming the file, line and key), applies --set overrides before
// validation, and echoes a resolved scenario back as the config and hash
// a result carries. Nothing downstream of it parses YAML.
package config
