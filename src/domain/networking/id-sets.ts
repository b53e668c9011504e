/**
 * Id sets of the networking repository's batch reads.
 */

/**
 * Ids to read rows of, or `'every'`: all rows, unfiltered — a superset the caller looks its ids
 * up in, cheaper than sending thousands of ids when a listing covers the whole cloud (an admin's).
 */
export type IdsOrEvery = readonly string[] | 'every';
