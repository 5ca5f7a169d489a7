// Package crawlorder holds the crawl orders of the Technosphere information
// retrieval course's lecture on focused crawling: the rules that give each
// URL of the crawl queue its priority, so that the queue is built and
// rebalanced towards the pages users want.
//
// Every order is an Order: it is told each fetched page (its URL, its words,
// its links with their anchor text) and answers with the priorities that
// page sets, for its links or, when it rebalances, for every URL it knows.
// The same orders drive the crawl simulator (Crawl) of the evaluation and
// the crawl loop's weights ("sekitei order"), so what is measured is what
// runs.
//
//   - BFS: breadth first, the baseline the lecture rejects (no priority).
//   - Fish: fish search (De Bra and Post, 1994): a depth budget d kept on
//     the children of relevant pages and d-1 on the others; at 0 the fish
//     dies and its URL is not crawled.
//   - Shark: shark search (Hersovici et al., 1998): fuzzy relevance of the
//     parent, inherited with decay, mixed with the relevance of the anchor
//     text and its context.
//   - BestFirst: naive best-first: a child's priority is the TF-IDF cosine
//     closeness of its parent page to the topic.
//   - PageRank (Brin and Page, 1998) and HITS authority (Kleinberg, 1999)
//     over the known graph, recomputed every Rebalance pages.
//   - QLinks: the few URLs users visit (QLinks, 5-10% coverage)
//     extrapolated to the unknown URLs per site, along links
//     (ql(B) = coef * ql(A)) or per segment; every score says which.
//
// Quotas share an index between sites or segments by the lecture's rules
// (see Quotas); Crawl applies them while it crawls.
package crawlorder
