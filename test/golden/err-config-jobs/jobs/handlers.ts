export async function closeResolved() {
  return 'closed';
}

export const remind = async () => 'reminded';
