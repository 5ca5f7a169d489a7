// Package sekitei is the "rock garden" of the Technosphere crawling course:
// URLs alike in form have alike content, so a site is cut into segments,
// each described by an anchored PCRE over the URL's path and query, and crawl
// effort follows the segments users visit (good URLs, the lecture's QLinks).
// It also holds the online fetch filter of the homework's second part.
//
// # Segments
//
// Build follows the lecture step by step:
//
//  1. Sample up to 2000 URLs of the site, half good and half other when there
//     are enough (the lecture's 1:1 of known to unknown, N about 1000 each).
//  2. Compute their sekitei features with package urlfeat.
//  3. Keep the features seen in at least alpha*N URLs (alpha 0.1).
//  4. Cluster the URLs by Jaccard distance, 1 - |A∩B|/|A∪B|, on their kept
//     features. URLs with the same kept features form one signature; the
//     signatures, most frequent first, each join the nearest leader within
//     MaxDistance (0.3) or become a leader, and then every signature is
//     assigned to its nearest leader. This is leader ("stack") clustering:
//     deterministic, O(signatures × clusters) rather than the O(n²) memory of
//     agglomerative clustering, and its leaders are the site's most common
//     URL forms, the "rocks".
//  5. Cut each cluster into the parts a regex can describe (refine): by
//     layout (number of path segments, trailing slash, query or not), then
//     greedily on the literal, namespace prefix ("File:") or extension that
//     most members share, when at least MinShare (1%) of the sample share it.
//  6. Write a regex per part from what its members share, position by
//     position: a common value is a literal, all digits give [0-9]+, a shared
//     namespace prefix, word before a number or extension is kept around
//     [^/?]+, a common query layout gives name=value tokens. So the lecture's
//     examples come out as ^/wiki/File:[^/?]+\.jpg$ and
//     ^/news/[0-9]+/[0-9]+/[0-9]+/[^/?]+/$ ([^/?] rather than [^/] so that
//     a path token never runs into the query).
//  7. Order the segments most specific first (literal bytes and constrained
//     positions), drop those no sample URL reaches, and end with the rest
//     segment ".*". A URL belongs to the first segment that matches.
//  8. Assign every URL, not only the sample, with github.com/dlclark/regexp2
//     (Perl syntax, the same answers as PCRE; a test checks each regex with
//     grep -P). A literal prefilter (the regex's required prefix and literal
//     runs, checked with strings functions) skips most segments without
//     running the backtracking engine.
//
// Quotas share a site quota by the lecture's rule: each segment a minimum,
// the rest in proportion to its pages with QLinks (good URLs).
//
// # The fetch filter
//
// Train fits a logistic regression (AdaGrad, L2, classes balanced) of good
// against general URLs on the Evidence features: urlfeat's features plus
// generalisations that carry over to unseen URLs (per-segment character-class
// shape, namespace before a colon, words, log2 length buckets, the whole-path
// template). It is hand-written because the job is 60 lines of sparse SGD on
// a thousand URLs; gonum offers optimisers over dense vectors but no sparse
// online classifier.
//
// The filter does not threshold the model's probability: the share of good
// URLs in a stream is unknown and the training sample is 1:1. It paces the
// quota instead: with q fetches left and l URLs still expected, it fetches a
// URL when its score is in the top q/l of the stream's score distribution,
// which starts as the model's out-of-fold scores of the training's general
// URLs and takes in every URL it sees. Good URLs, which score high, are
// fetched wherever they come in the stream, and the quota is spent evenly on
// the best of the rest: neither used up before the stream's end nor left over.
//
// # A crawl's state
//
// State keeps, for a crawl loop that runs for months, what the segment
// quotas need across turns, and updates it from each batch alone:
//
//	st, err := OpenState(path, StateOptions{SiteQuota: 500, MinQuota: 20})
//	stats, err := st.Apply(batchID, fetchRecords, good) // once per batch ID
//	err = st.Close()
//
// Per host it holds the known URLs (fetched URLs and their links; each with
// its good mark and its fetches and robots.txt refusals), the segments with
// their quotas and use. A host is re-clustered when it has grown by Regrow
// (a quarter) since its last clustering, reading only its own URLs, so the
// work per turn stays flat as the crawl ages. The state is a bbolt file
// (go.etcd.io/bbolt): one transaction per batch gives crash safety and
// exactly-once batches, and a key range per host gives the per-host reads.
//
// Admitter applies the loop's filter rule (Decide) to a turn's candidates
// against one or more states opened read-only.
package sekitei
