package main

import "context"

// startRouting prepares the routes of --compare routing=off,on. Until the in-process
// listener is wired in, routing is compared client-side: off sends read intent to the
// primary, on to the standbys (recorded as such in the result).
func (p *loadPlan) startRouting(ctx context.Context) error { return nil }

func (p *loadPlan) stopRouting() {}
