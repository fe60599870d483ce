"""The judge's core: the refusals before a build (refusals), the kinds of grade behind one
interface (graders), the comparison and timing of reps (grading) and the one outcome of a grade
(outcome)."""
