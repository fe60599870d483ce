"""hb's distributed grades on MPI: tiles by plan, the generated C driver, the launcher, scaling."""
