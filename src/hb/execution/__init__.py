"""Where untrusted code runs: the box (sandbox), builds in it (build), timed runs (runner) under
a trusted supervisor (supervisor, supervisor_pool, box_pool), and the runners inside the box
(boxrunner, pybox, cudarunner, and papibox around them in a profile box)."""
