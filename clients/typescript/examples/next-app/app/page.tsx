import Link from 'next/link';
import { home } from '../lib/blog';

export default async function Home() {
  const { featured, latest } = await home();
  return (
    <main>
      <h1>{latest.heading}</h1>
      <ul>
        {[...featured, ...latest.posts].map((card) => (
          <li key={card.href}>
            <Link href={card.href}>{card.title}</Link> <small>{card.date}</small>
          </li>
        ))}
      </ul>
    </main>
  );
}
