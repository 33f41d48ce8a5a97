// dns2 (the test DNS server) ships no types: the part the DNS-check tests use.
declare module 'dns2' {
  interface Question {
    name: string;
    type: number;
  }
  interface Packet {
    header: { rcode: number };
    questions: Question[];
    answers: Array<Record<string, unknown>>;
  }
  interface DnsServer {
    listen(options: { udp?: { port: number; address: string } }): Promise<{ udp?: { port: number; address: string } }>;
    close(): Promise<void>;
  }
  const dns2: {
    Packet: {
      TYPE: Record<string, number>;
      CLASS: Record<string, number>;
      createResponseFromRequest(request: { questions: Question[] }): Packet;
    };
    createServer(options: {
      udp?: boolean;
      handle: (request: { questions: Question[] }, send: (response: Packet) => void) => void;
    }): DnsServer;
  };
  export default dns2;
}
