"""Golden cases that torchnative does not pass yet, each with what is missing.

They run as strict xfails: a case listed here that starts passing fails the suite, so the entry
must be removed when the gap closes (and the list can only shrink honestly). When ours is the
reference interpreter (TORCHNATIVE_GOLDEN_OURS=ref) the list does not apply."""

GAPS = {
}
