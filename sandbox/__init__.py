"""passhat.sandbox: domains, simulated customers, agents and the trial runner."""
