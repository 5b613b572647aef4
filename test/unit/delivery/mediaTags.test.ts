import { withoutMedia } from '../../../src/delivery/mediaTags';

/**
 * `MEDIA:` tags as Hermes v0.18.2's gateway finds them (gateway/platforms/base.py
 * MEDIA_TAG_CLEANUP_RE, MEDIA_DELIVERY_EXTS, _strip_media_tag_directives): taken out of the
 * answer, their file names kept; everything else of the answer as it was.
 */
describe('an answer with MEDIA: tags', () => {
    it('loses a tag at the end of a sentence, and the space before it', () => {
        expect(withoutMedia('Here is the chart: MEDIA:/tmp/c.png')).toEqual({ text: 'Here is the chart:', files: ['c.png'] });
    });

    it('loses the lines that held only tags, quoted paths with spaces too', () => {
        expect(withoutMedia('Done.\n\nMEDIA:/tmp/report.pdf\nMEDIA:"/home/me/My File.xlsx"\n\nAnything else?')).toEqual({
            text: 'Done.\n\n\nAnything else?',
            files: ['report.pdf', 'My File.xlsx'],
        });
    });

    it('takes backticked, home-relative, Windows and upper-case paths, before punctuation', () => {
        expect(withoutMedia('A MEDIA:`/tmp/a b.png`, then\nB MEDIA:~/out/b.csv;\nC (MEDIA:C:\\Users\\me\\c.JPG) end')).toEqual({
            text: 'A, then\nB;\nC () end',
            files: ['a b.png', 'b.csv', 'c.JPG'],
        });
    });

    it('takes two tags on one line whole, as the gateway does (its path runs to the last extension), naming both files', () => {
        expect(withoutMedia('MEDIA:/tmp/a.png and MEDIA:/tmp/b.png')).toEqual({ text: '', files: ['a.png', 'b.png'] });
    });

    it('keeps a tag written as code: inline or fenced', () => {
        const answer = 'Write `MEDIA:/tmp/x.png` to send one.\n```\nMEDIA:/a/b.png\n```';
        expect(withoutMedia(answer)).toEqual({ text: answer, files: [] });
    });

    it('keeps what the gateway keeps: a URL, a relative path, a file without a deliverable extension', () => {
        for (const answer of ['See MEDIA:https://example.com/a.png', 'MEDIA:out/a.png', 'MEDIA:/etc/passwd', 'MEDIA:/tmp/tool.exe']) {
            expect(withoutMedia(answer)).toEqual({ text: answer, files: [] });
        }
    });

    it('reads an unquoted path over at most 17 words: a longer run is left as text (what keeps a hostile answer linear)', () => {
        const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
        expect(withoutMedia(`MEDIA:/tmp/${words(17)}.png`)).toEqual({ text: '', files: [`${words(17).split('/').pop()}.png`] });
        const long = `MEDIA:/tmp/${words(18)}.png`;
        expect(withoutMedia(long)).toEqual({ text: long, files: [] });
    });

    it('names a quoted file without its quotes, a relative one too (quoted paths need no anchor)', () => {
        expect(withoutMedia('MEDIA:"report.pdf" and MEDIA:`chart.png`').files).toEqual(['report.pdf', 'chart.png']);
    });

    it('trims what is left: a line of only a tag and spaces goes, the answer loses its outer spaces', () => {
        expect(withoutMedia('A\nMEDIA:/tmp/a.png   \nB')).toEqual({ text: 'A\nB', files: ['a.png'] });
        expect(withoutMedia('  Look MEDIA:/tmp/a.png  ')).toEqual({ text: 'Look', files: ['a.png'] });
    });

    it('drops the delivery markers the gateway reads', () => {
        expect(withoutMedia('[[audio_as_voice]]\nMEDIA:/tmp/voice.ogg')).toEqual({ text: '', files: ['voice.ogg'] });
        expect(withoutMedia('Photos [[as_document]] attached.')).toEqual({ text: 'Photos  attached.', files: [] });
    });

    it('leaves an answer without any as it is, to the byte', () => {
        const answer = '  Plain answer, with [brackets] and MEDIA in capitals.\n';
        expect(withoutMedia(answer)).toEqual({ text: answer, files: [] });
    });
});
