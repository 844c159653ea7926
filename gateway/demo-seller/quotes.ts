/** The demo seller's v1 answer: one aphorism per UTC day, the same for every buyer that day. */
export const QUOTES: ReadonlyArray<{ quote: string; author: string }> = [
  { quote: 'Simplicity is prerequisite for reliability.', author: 'Edsger W. Dijkstra' },
  { quote: 'Make it work, make it right, make it fast.', author: 'Kent Beck' },
  { quote: 'Premature optimization is the root of all evil.', author: 'Donald Knuth' },
  { quote: 'Programs must be written for people to read, and only incidentally for machines to execute.', author: 'Harold Abelson' },
  { quote: 'The cheapest, fastest, and most reliable components are those that are not there.', author: 'Gordon Bell' },
  { quote: 'Debugging is twice as hard as writing the code in the first place.', author: 'Brian Kernighan' },
  { quote: 'A distributed system is one in which the failure of a computer you did not even know existed can render your own computer unusable.', author: 'Leslie Lamport' },
];

export function quoteOfTheDay(now: Date): { quote: string; author: string; day: string } {
  const day = now.toISOString().slice(0, 10);
  const index = Math.floor(now.getTime() / 86_400_000) % QUOTES.length;
  return { ...QUOTES[index]!, day };
}
